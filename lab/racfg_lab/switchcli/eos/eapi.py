"""Arista eAPI for the emulated EOS switch: JSON-RPC ``runCmds`` over HTTPS (``POST /command-api``).

Served from the same process (and asyncio loop) as the switch's SSH CLI, on the same management
address, so both answer from one running config: a change typed over SSH is what eAPI shows and
the reverse. Authentication is HTTP basic with the SSH username and password; the certificate is
self-signed, made once per switch and kept with its state. ``pyeapi`` and ANTA (``asynceapi``)
connect to it unmodified.

What EOS does and this does too: commands run in order from enable mode; ``format`` ``json``
returns each command's object (``{}`` for a config command), ``text`` returns ``{"output": ...}``;
the first failing command stops the request with JSON-RPC error 1002 whose ``data`` holds the
results so far plus ``{"errors": [...]}`` for the failed one; a show command with no JSON form,
asked for in JSON, fails with 1003.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import hmac
import ipaddress
import json
import ssl
from pathlib import Path
from typing import Any

from racfg_lab.switchcli.engine import CliError, CliSession, NotConvertedError
from racfg_lab.switchcli.switch import EmulatedSwitch

API_PATH = "/command-api"
MAX_BODY = 4 * 1024 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            413: "Payload Too Large"}
_NOT_CONVERTED = ("Command cannot be used over the API at this time. To see ASCII output, set format='text' "
                  "in your request")


def certificate(state_dir: Path, name: str, address: str) -> tuple[Path, Path]:
    """The switch's self-signed certificate and key (PEM), made once and kept across restarts."""
    cert_path, key_path = state_dir / "eapi.crt", state_dir / "eapi.key"
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    alt: list[x509.GeneralName] = [x509.DNSName(name)]
    with contextlib.suppress(ValueError):
        alt.append(x509.IPAddress(ipaddress.ip_address(address)))
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .sign(key, hashes.SHA256()))
    state_dir.mkdir(parents=True, exist_ok=True)
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def run_cmds(switch: EmulatedSwitch, params: dict[str, Any]) -> tuple[list[Any], dict[str, Any] | None]:
    """(results, error) of one ``runCmds`` call, as EOS answers it."""
    fmt = str(params.get("format") or "json").lower()
    if fmt not in ("json", "text"):
        return [], {"code": -32602, "message": f"Invalid format {fmt!r}: expected 'json' or 'text'", "data": []}
    cmds = params.get("cmds")
    if not isinstance(cmds, list) or not cmds:
        return [], {"code": -32602, "message": "Invalid params: 'cmds' must be a non-empty list", "data": []}
    session = CliSession(switch)
    session.mode = "enable"
    try:
        return _run(session, cmds, fmt)
    finally:  # the request's CLI goes away; a config session it left uncommitted stays pending
        session.close()


def _run(session: CliSession, cmds: list[Any], fmt: str) -> tuple[list[Any], dict[str, Any] | None]:
    results: list[Any] = []
    for i, entry in enumerate(cmds, start=1):
        line = str(entry.get("cmd", "") if isinstance(entry, dict) else entry)
        try:
            results.append(session.run_api(line, fmt))
        except CliError as exc:
            message = str(exc).removeprefix("% ").strip()
            failed: dict[str, Any] = {"errors": [message]}
            if fmt == "text":
                failed["output"] = f"{exc}\n"
            return [], {"code": 1002, "message": f"CLI command {i} of {len(cmds)} '{line}' failed: invalid command",
                        "data": [*results, failed]}
        except NotConvertedError:
            return [], {"code": 1003,
                        "message": f"CLI command {i} of {len(cmds)} '{line}' failed: unconverted command",
                        "data": [*results, {"errors": [_NOT_CONVERTED]}]}
    return results, None


class EapiServer:
    """HTTP/1.1 with keep-alive, just enough of it for eAPI clients (requests, httpx)."""

    def __init__(self, switch: EmulatedSwitch, username: str, password: str) -> None:
        self.switch = switch
        self.expected = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection is to be closed."""
        request = await reader.readline()
        if not request:
            return False
        method, path, version = [*request.decode("latin-1").split(), "", "", ""][:3]
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY:
            await self._send(writer, 413, {"error": "request too large"}, close=True)
            return False
        body = await reader.readexactly(length) if length else b""
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        path = path.split("?", 1)[0]
        if path != API_PATH:
            await self._send(writer, 404, {"error": f"no such path {path}"}, close=not keep)
        elif not hmac.compare_digest(headers.get("authorization", "").encode(), self.expected.encode()):
            await self._send(writer, 401, {"error": "Unable to authenticate user: Bad username/password combination"},
                             close=not keep, extra={"WWW-Authenticate": 'Basic realm="eAPI"'})
        elif method in ("HEAD", "GET"):
            await self._send(writer, 200, {}, close=not keep, head=method == "HEAD")
        elif method != "POST":
            await self._send(writer, 405, {"error": f"method {method} not allowed"}, close=not keep)
        else:
            await self._send(writer, 200, self._jsonrpc(body), close=not keep)
        return keep

    def _jsonrpc(self, body: bytes) -> dict[str, Any]:
        try:
            request = json.loads(body)
        except ValueError:
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error", "data": []}}
        req_id = request.get("id") if isinstance(request, dict) else None
        if not isinstance(request, dict) or request.get("method") != "runCmds":
            method = request.get("method") if isinstance(request, dict) else None
            return {"jsonrpc": "2.0", "id": req_id,
                    "error": {"code": -32601, "message": f"Method not found: {method}", "data": []}}
        results, error = run_cmds(self.switch, request.get("params") or {})
        if error is not None:
            return {"jsonrpc": "2.0", "id": req_id, "error": error}
        return {"jsonrpc": "2.0", "id": req_id, "result": results}

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], *, close: bool,
                    head: bool = False, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}", "Content-Type: application/json",
                 f"Content-Length: {len(data)}", "Server: racfg-lab-eapi",
                 f"Connection: {'close' if close else 'keep-alive'}"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head else data))
        await writer.drain()


async def start_eapi(switch: EmulatedSwitch, listen: str, port: int, username: str, password: str,
                     state_dir: Path) -> asyncio.Server:
    """Listen for eAPI on ``listen:port`` (HTTPS); the caller closes the returned server."""
    cert, key = certificate(state_dir, switch.cfg.name, listen)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    server = EapiServer(switch, username, password)
    return await asyncio.start_server(server.handle, listen, port, ssl=context)
