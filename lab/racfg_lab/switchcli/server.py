"""The SSH side of an emulated switch (asyncssh): password login, an interactive shell with
echo and a prompt, as netmiko's own drivers expect from a real switch, and one-shot exec."""

from __future__ import annotations

import asyncio
import hmac
from pathlib import Path

import asyncssh

from racfg_lab.switchcli import faults
from racfg_lab.switchcli.config import LOGIN_MARK, CliConfig
from racfg_lab.switchcli.engine import CliSession
from racfg_lab.switchcli.switch import EmulatedSwitch


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


class ShellSession(asyncssh.SSHServerSession):  # type: ignore[misc]
    """One SSH channel: characters in, echo + output + prompt out."""

    def __init__(self, switch: EmulatedSwitch) -> None:
        self.cli = CliSession(switch)
        self.buffer = ""
        self.last = ""
        self.chan: asyncssh.SSHServerChannel | None = None
        self.exec_command: str | None = None
        self.config_lines = 0  # lines typed in a configuration mode (what a session cut counts)
        self.hung = False

    def connection_made(self, chan: asyncssh.SSHServerChannel) -> None:
        self.chan = chan

    def connection_lost(self, exc: Exception | None) -> None:
        self.cli.close()

    def _cut(self, line: str) -> faults.SessionCut | None:
        """The cut a test armed for this config line (faults.py), taken; None: answer as usual. A blank
        line (what a client sends to see the prompt) is not a config line."""
        if self.cli.mode in ("user", "enable") or not line.strip():
            return None
        self.config_lines += 1
        return faults.take(self.cli.sw.cfg.state_dir, self.config_lines)

    def pty_requested(self, term_type: str, term_size: tuple[int, int, int, int], term_modes: dict) -> bool:
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        self.exec_command = command
        return True

    def session_started(self) -> None:
        assert self.chan is not None
        if self.exec_command is not None:
            self.cli.mode = "enable"
            output, _ = self.cli.handle(self.exec_command)
            self.chan.write(_crlf(output + "\n" if output else ""))
            self.chan.exit(0)
            return
        self.chan.write(_crlf(self.cli.p.banner) + self.cli.prompt())

    def data_received(self, data: str, datatype: int | None) -> None:
        assert self.chan is not None
        if self.hung:
            return
        out: list[str] = []
        for ch in data:
            if ch in "\r\n":
                if ch == "\n" and self.last == "\r":
                    self.last = ch
                    continue
                self.last = ch
                line, self.buffer = self.buffer, ""
                cut = self._cut(line)
                output, close = self.cli.handle(line)
                if cut is not None:  # executed, never answered: drop the connection or go silent
                    self._fire(cut, "".join(out))
                    return
                out.append("\r\n")
                if close:
                    self.chan.write("".join(out))
                    self.chan.exit(0)
                    return
                if output:
                    out.append(_crlf(output.rstrip("\n")) + "\r\n")
                out.append(self.cli.prompt())
                continue
            self.last = ch
            if ch in "\x7f\x08":
                if self.buffer:
                    self.buffer = self.buffer[:-1]
                    out.append("\b \b")
            elif ch == "\x03":
                self.buffer = ""
                out.append("^C\r\n" + self.cli.prompt())
            elif ch >= " " or ch == "\t":
                self.buffer += ch
                out.append(ch)
        if out:
            self.chan.write("".join(out))

    def _fire(self, cut: faults.SessionCut, before: str) -> None:
        assert self.chan is not None
        if before:
            self.chan.write(before)
        print(f"switchcli: session cut at config line {cut.after} ({'hang' if cut.hang else 'drop'})", flush=True)
        if cut.hang:
            self.hung = True
        else:  # no disconnect message, no channel close: the connection is just gone
            self.chan.get_extra_info("connection").abort()

    def eof_received(self) -> bool:
        return False

    def break_received(self, msec: int) -> bool:
        return True


class SwitchServer(asyncssh.SSHServer):  # type: ignore[misc]
    def __init__(self, switch: EmulatedSwitch, username: str, password: str) -> None:
        self.switch, self.username, self.password = switch, username, password

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        ok = username == self.username and hmac.compare_digest(password.encode(), self.password.encode())
        if ok:  # one line per login in the switch's cli.log, which the lab API counts (api.switch_logins)
            print(f"{LOGIN_MARK} {username}", flush=True)
        return ok

    def kbdint_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return False

    def session_requested(self) -> ShellSession:
        return ShellSession(self.switch)


def host_key(state_dir: Path) -> asyncssh.SSHKey:
    """The switch's SSH host key, kept across restarts: made by ``lab up`` before the switch first
    starts (racfg_lab.switches.ensure_host_key), so the lab's known_hosts lists it; made here
    (ed25519: instant) for a switch started without one."""
    path = state_dir / "ssh_host_ed25519_key"
    if path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519")
    state_dir.mkdir(parents=True, exist_ok=True)
    key.write_private_key(str(path))
    path.chmod(0o600)
    return key


async def serve(cfg: CliConfig, ready: asyncio.Event | None = None) -> None:
    """Run the switch until cancelled: its SSH CLI and, on EOS, its eAPI, both on one running config.

    eAPI listens before SSH does, so a switch that answers SSH (what lab up waits for) answers eAPI."""
    switch = EmulatedSwitch(cfg)
    password = cfg.password
    eapi = None
    if cfg.eapi_port:
        from racfg_lab.switchcli.eos.eapi import start_eapi

        eapi = await start_eapi(switch, cfg.listen, cfg.eapi_port, cfg.username, password, cfg.state_dir)
    server = await asyncssh.create_server(
        lambda: SwitchServer(switch, cfg.username, password), cfg.listen, cfg.ssh_port,
        server_host_keys=[host_key(cfg.state_dir)], line_editor=False, encoding="utf-8",
        agent_forwarding=False, x11_forwarding=False, allow_scp=False, login_timeout=30,
    )
    if ready is not None:
        ready.set()
    try:
        async with server:
            await server.wait_closed()
    finally:
        if eapi is not None:
            eapi.close()
