"""The lab's HTTP file server: the vendor's download site, on the management gateway address.

A site's hosts download what the inventory points them at (software.ofed.source: a MLNX_OFED
``.tgz`` URL). The lab has no internet and no vendor, so when an inventory's URL names the lab's
management gateway, ``lab up`` serves that path from ``<site dir>/http/`` with a plain HTTP
server bound to the gateway address on the site's bridge (in this machine's namespace, where the
bridge is; the hosts reach it over their management veths). Only started for labs whose
inventory needs it (racfg_lab.mlnxofed decides): a lab that serves nothing runs no listener.
Run as every lab service is (racfg_lab.service); its access log is ``logs/httpserver.log``.

Run as ``python -m racfg_lab.httpserver ADDRESS PORT DIRECTORY SITE`` (the site labels the process).
"""

from __future__ import annotations

import functools
import signal
import socket
import sys
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from racfg.errors import CannotRunError
from racfg_lab.machines import is_running
from racfg_lab.service import LabService

SERVICE = LabService("httpserver", "racfg_lab.httpserver", "HTTP server")


def root(site_dir: Path) -> Path:
    """What the server serves: files put there appear at ``http://<gateway>:<port>/<relative path>``."""
    return site_dir / "http"


def start(site_dir: Path, address: str, port: int, timeout: float = 5.0) -> int:
    """Start the server on ``address:port`` serving root(site_dir) (idempotent: a running one is
    kept), and wait until it accepts connections: one that cannot bind fails here, with its reason."""
    root(site_dir).mkdir(parents=True, exist_ok=True)
    pid = SERVICE.start(site_dir, address, str(port), str(root(site_dir)))
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return pid
        except OSError as exc:
            if not is_running(pid, "") or time.monotonic() > deadline:  # exited (cannot bind), or hangs
                SERVICE.stop(site_dir)
                log = site_dir / "logs" / f"{SERVICE.name}.log"
                raise CannotRunError(f"the lab's HTTP server on {address}:{port} does not answer ({exc})",
                                     hint=f"see {log}") from exc
            time.sleep(0.05)


def serve(address: str, port: int, directory: str) -> None:
    handler = functools.partial(SimpleHTTPRequestHandler, directory=directory)
    server = ThreadingHTTPServer((address, port), handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"serving {directory} on http://{address}:{port}/", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), sys.argv[3])
