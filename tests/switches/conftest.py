"""Emulated switches (racfg_lab.switchcli) on 127.0.0.1 with free ports: real SSH, real netmiko.

Each switch gets its host key before it starts, as a lab switch does, and a known_hosts file that
lists it (``EmulatedSwitch.known_hosts``): racfg's sessions check a switch's key strictly."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from racfg.ssh.known_hosts import KnownHosts, host_label
from racfg_lab.switches import ensure_host_key

PASSWORD = "lab-secret-1"
MODELS = {"onyx": ("SN2700", 32, "1/1"), "eos": ("7368X", 128, "Ethernet1/1"), "mlnxos-ib": ("SB7800", 36, "1/1")}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class EmulatedSwitch:
    name: str
    platform: str
    port: int
    config: Path
    known_hosts_file: Path
    proc: subprocess.Popen | None = None

    @property
    def known_hosts(self) -> KnownHosts:
        """The host keys a session to this switch trusts: its own file, as a provider's."""
        return KnownHosts(provider=self.known_hosts_file)

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "racfg_lab.switchcli", "--config", str(self.config)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"switchcli {self.name} did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def make_switch(tmp: Path, platform: str, name: str = "sw1") -> EmulatedSwitch:
    model, count, first = MODELS[platform]
    port = free_port()
    pw = tmp / "password"
    pw.write_text(PASSWORD)
    pw.chmod(0o600)
    cfg = {
        "name": name, "platform": platform, "model": model, "ports_count": count, "listen": "127.0.0.1",
        "ssh_port": port, "username": "admin", "password_file": str(pw), "state_dir": str(tmp / "state"),
        "ports": {first: {"ifname": None, "speed_gbps": 100.0, "peer_host": "dgx01", "peer_nic": "data0"}},
    }
    path = tmp / "cli.json"
    path.write_text(json.dumps(cfg))
    known = tmp / "known_hosts"
    known.write_text(f"{host_label('127.0.0.1', port)} {ensure_host_key(tmp / 'state')}\n")
    return EmulatedSwitch(name, platform, port, path, known)


@pytest.fixture(params=["onyx", "eos", "mlnxos-ib"])
def any_switch(request, tmp_path) -> Iterator[EmulatedSwitch]:
    sw = make_switch(tmp_path, request.param)
    sw.start()
    yield sw
    sw.stop()


@pytest.fixture
def switch_factory(tmp_path) -> Iterator:
    started: list[EmulatedSwitch] = []

    def factory(platform: str, name: str = "sw1") -> EmulatedSwitch:
        sub = tmp_path / f"{name}-{platform}"
        sub.mkdir()
        sw = make_switch(sub, platform, name)
        sw.start()
        started.append(sw)
        return sw

    yield factory
    for sw in started:
        sw.stop()
