"""A tiny user benchmark for the smoke tests: read data over the fabric from the storage hosts.

``--serve``: stream zeros to every connection (run on the storage hosts, bounded by --seconds).
Otherwise: connect to every server in ``--from`` at once, read for ``--seconds`` and print
``rate: X MB/s``, the figure racfg smoke cuts out with the inventory's regex.
"""

import argparse
import socket
import threading
import time

PORT = 5999
CHUNK = 1 << 20


def serve(seconds: float) -> None:
    listener = socket.create_server(("", PORT), reuse_port=True)
    listener.settimeout(1.0)
    deadline = time.monotonic() + seconds
    zeros = bytes(CHUNK)

    def stream(conn: socket.socket) -> None:
        conn.settimeout(5.0)
        try:
            while time.monotonic() < deadline:
                conn.sendall(zeros)
        except OSError:
            pass
        finally:
            conn.close()

    while time.monotonic() < deadline:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        threading.Thread(target=stream, args=(conn,), daemon=True).start()


def read(servers: list[str], seconds: float) -> None:
    counts = [0] * len(servers)

    def pull(i: int, server: str) -> None:
        with socket.create_connection((server, PORT), timeout=5.0) as conn:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                data = conn.recv(CHUNK)
                if not data:
                    break
                counts[i] += len(data)

    threads = [threading.Thread(target=pull, args=(i, s)) for i, s in enumerate(servers)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"rate: {sum(counts) / (time.monotonic() - start) / 1e6:.2f} MB/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--from", dest="servers", default="")
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    if args.serve:
        serve(args.seconds)
    else:
        read([s for s in args.servers.split(",") if s], args.seconds)
