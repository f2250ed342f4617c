"""An SSH session to one switch through netmiko's own platform driver, with errors a person can
act on (address and port in every connection error, no tracebacks), and the switch's host key
checked as a host's is (racfg.ssh.hostkeys: read and judged, then netmiko strict on that key)."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException

from racfg.ssh.hostkeys import Peer, SshProtocolError, checked_key, pinned, switched_key
from racfg.ssh.known_hosts import KnownHosts
from racfg.ssh.reach import reach_fix
from racfg.switches.drivers import SwitchDriver, get_driver
from racfg.switches.facts import SwitchFacts
from racfg.switches.parsers.vendor_values import ParseError
from racfg.switches.switch_errors import SwitchAuthError, SwitchConfigError, SwitchUnreachable

logging.getLogger("paramiko").setLevel(logging.CRITICAL)


@dataclass
class SwitchTarget:
    """How to reach one switch. The password is kept out of repr() so it never lands in logs."""

    name: str
    platform: str
    host: str
    port: int = 22
    username: str = "admin"
    password: str = field(default="", repr=False)
    timeout: float = 10.0
    known_hosts: KnownHosts = field(default_factory=KnownHosts)  # whose keys it may present (the user's files)
    # The longest wait for a config line's answer: past it the session counts as lost (a dropped
    # connection shows up the same way, as netmiko reads a closed channel until its timeout).
    command_timeout: float = 60.0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def peer(self) -> Peer:
        return Peer("switch", self.name, self.host, self.port)

    @classmethod
    def from_vars(cls, switch: dict[str, Any], password: str, timeout: float = 10.0,
                  known_hosts: KnownHosts | None = None, command_timeout: float = 60.0) -> SwitchTarget:
        """From the rendered ``racfg_switch`` host var and a resolved password."""
        return cls(str(switch["name"]), str(switch["platform"]), str(switch["mgmt"]), int(switch.get("ssh_port") or 22),
                   str(switch.get("username") or "admin"), password, timeout, known_hosts or KnownHosts(),
                   command_timeout)


class SwitchSession:
    """``with SwitchSession(target) as s: s.facts()`` — enable mode, paging off, ready for commands."""

    def __init__(self, target: SwitchTarget, driver: SwitchDriver | None = None) -> None:
        self.target = target
        self.driver = driver or get_driver(target.platform)
        self.conn: Any = None

    def __enter__(self) -> SwitchSession:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Log in: the switch's key is checked first (no password is sent to a switch whose key
        is not known), then netmiko connects accepting that key alone."""
        t = self.target
        try:
            key = checked_key(t.peer, t.known_hosts, t.timeout)
            with pinned(t.peer, key) as (known_file, algorithms):
                self.conn = self.driver.open_connection(
                    host=t.host, port=t.port, username=t.username,
                    password=t.password, secret=t.password, timeout=t.timeout, conn_timeout=t.timeout,
                    auth_timeout=t.timeout, banner_timeout=t.timeout, fast_cli=True, allow_agent=False,
                    use_keys=False, ssh_config_file=None, ssh_strict=True, system_host_keys=False,
                    alt_host_keys=True, alt_key_file=str(known_file), disabled_algorithms=algorithms,
                )
            self.conn.enable()
        except NetmikoAuthenticationException:
            raise SwitchAuthError(
                f"switch {t.name} ({t.address}): authentication failed for user {t.username!r}",
                hint="check the switch credentials in the inventory",
            ) from None
        except (TimeoutError, NetmikoTimeoutException, SshProtocolError, OSError, EOFError) as exc:
            if (refused := switched_key(t.peer, t.known_hosts, exc)) is not None:
                raise refused from None
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            fix = reach_fix(t.name, t.host, t.port, exc, credentials=f"the password for {t.username} on {t.name}")
            raise SwitchUnreachable(f"switch {t.name}: cannot reach {t.address} over SSH ({reason})",
                                    hint=fix) from None

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):  # a dead session must not mask the real error
                self.conn.disconnect()
            self.conn = None

    # --- commands ---------------------------------------------------------------------------
    def show(self, command: str) -> str:
        """Run a show command; a CLI error (``% ...``) becomes a SwitchConfigError."""
        output = str(self.conn.send_command(command, read_timeout=60))
        error = self.driver.error_re.search(output)
        if error and output.lstrip().startswith("%"):
            raise SwitchConfigError(f"switch {self.target.name}: {command!r} failed: {error.group(0).strip()}")
        return output

    def raw_facts(self) -> dict[str, str]:
        return {key: self.show(cmd) for key, cmd in self.driver.show.items()}

    def facts(self, routing: bool = False) -> SwitchFacts:
        """The switch's facts; with ``routing``, also its BGP and route tables where it routes (what
        validate and drift compare; apply plans from the config and does not need them)."""
        facts = self.driver.facts_from_raw(self.target.name, self.raw_facts())
        commands = self.driver.routing_commands(facts) if routing else {}
        if not commands:
            return facts
        try:
            return self.driver.with_routing(facts, {key: self.show(cmd) for key, cmd in commands.items()})
        except (SwitchConfigError, ParseError) as exc:
            # The ports and config were read: a routing table that cannot be is said, not fatal to them.
            return replace(facts, routing_error=str(exc))

    def send_line(self, line: str, expect: str) -> str:
        """Type one config line and wait for the prompt ``expect``; returns what the switch printed."""
        return str(self.conn.send_command(line, expect_string=expect, strip_prompt=False,
                                          read_timeout=self.target.command_timeout))

    def rejected(self, output: str) -> str | None:
        match = self.driver.error_re.search(output)
        return match.group(0).strip() if match else None
