"""The CLI engine shared by every emulated platform: modes, prompts, command matching with
abbreviations, errors, pipes, and the actions that change the switch's config.

One instance per SSH session; the switch (config, links) is shared between sessions.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from racfg.catalog import IB_MTUS, IB_SPEEDS
from racfg.switches.ports import canonical_port, device_port
from racfg_lab.switchcli.eos.formats import eos_running_section
from racfg_lab.switchcli.errors import CliError
from racfg_lab.switchcli.formats.common import to_json
from racfg_lab.switchcli.l3cli import RoutingCommands
from racfg_lab.switchcli.pfccli import PfcCommands
from racfg_lab.switchcli.platforms import PLATFORMS, TEXT_FORMS, Platform
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch

IB_MTU_WORDS = {word.upper(): mtu for mtu, word in IB_MTUS.items()}
ETHERNET_SPEEDS = (1.0, 10.0, 25.0, 40.0, 50.0, 56.0, 100.0, 200.0, 400.0)


class NotConvertedError(Exception):
    """A show command that has only a text form, asked for in JSON over eAPI (EOS error 1003)."""


def _match(pattern: list[str], words: list[tuple[str, int]], line: str, exact: bool) -> tuple[dict[str, str], int]:
    """(args, matched word count); args is {} with count < 0 when the pattern does not match."""
    args: dict[str, str] = {}
    i = 0
    for token in pattern:
        word = words[i][0].lower() if i < len(words) else None
        if token.startswith("[") and token.endswith("]"):
            lit = token[1:-1]
            if word is not None and (word == lit or (not exact and lit.startswith(word))):
                args[lit] = lit  # the handler can tell "mtu 9000 force" from "mtu 9000"
                i += 1
            continue
        if token.startswith("<") and token.endswith("...>"):
            if word is None:
                return {}, -i - 1
            args[token[1:-4]] = line[words[i][1]:].strip()
            return args, len(words)
        if token.startswith("<"):
            if word is None:
                return {}, -i - 1
            args[token[1:-1]] = words[i][0]
            i += 1
            continue
        if word is None or not (word == token or (not exact and token.startswith(word))):
            return {}, -i - 1
        i += 1
    return (args, i) if i == len(words) else ({}, -i - 1)


class CliSession(RoutingCommands, PfcCommands):
    def __init__(self, switch: EmulatedSwitch) -> None:
        self.sw = switch
        self.p: Platform = PLATFORMS[switch.cfg.platform]
        self.mode = "user"
        self.port: str | None = None
        self.svi: int | None = None  # the VLAN interface being configured (mode "svi")
        self._session: str | None = None
        self.terminal = switch.new_terminal()  # how ``show configuration sessions`` names this CLI

    # --- the EOS config session this CLI is in ------------------------------------------------
    @property
    def session(self) -> str | None:
        return self._session

    @session.setter
    def session(self, name: str | None) -> None:
        """Entering or leaving a session is what the switch lists as the session's instances: a
        pending session nobody is in was left (committed by no one), one with an instance is in use."""
        if name != self._session:
            self.sw.leave_session(self._session, self.terminal)
            self.sw.join_session(name, self.terminal)
        self._session = name

    def close(self) -> None:
        """The client went away: this CLI leaves its session, which stays pending (EOS keeps an
        uncommitted session until it is committed, aborted, times out or the switch reboots)."""
        self.session = None

    # --- prompt and dispatch ------------------------------------------------------------------
    @property
    def config(self) -> SwitchConfig:
        if self.session is not None:
            return self.sw.sessions[self.session]
        return self.sw.running

    def prompt(self) -> str:
        port = self.port
        if port and self.p.short_port_in_prompt:
            port = device_port(self.p.name, port, short=True)
        session = f"-s-{self.session}" if self.session else ""
        bgp = self.config.l3.bgp
        return self.p.prompts[self.mode].format(host=self.config.hostname, port=port, session=session,
                                                svi=self.svi, asn=bgp.asn if bgp else "")

    def handle(self, line: str) -> tuple[str, bool]:
        """Run one typed line: (output, close the session?)."""
        line = line.strip()
        if not line or line.startswith("!") or line.startswith("#"):
            return "", False
        command, _, pipe = line.partition(" | ")
        words = [(m.group(0), m.start()) for m in re.finditer(r"\S+", command)]
        try:
            action, args = self._lookup(command, words)
            if action == "logout":
                return "", True
            return self._run(action, args, pipe.strip()), False
        except CliError as exc:
            return str(exc), False

    def _lookup(self, command: str, words: list[tuple[str, int]]) -> tuple[str, dict[str, str]]:
        rules = [(pat.split(), action) for modes, pat, action in self.p.grammar if self.mode in modes]
        best = 0
        for exact in (True, False):
            for pattern, action in rules:
                args, count = _match(pattern, words, command, exact)
                if count >= 0:
                    return action, args
                best = max(best, -count - 1)
        if best >= len(words):
            raise CliError(self.p.incomplete_error)
        token = words[min(best, len(words) - 1)][0]
        raise CliError(self.p.unknown_error.format(token=token, index=best))

    def _run(self, action: str, args: dict[str, str], pipe: str) -> str:
        if action.startswith("show:"):
            return self._show(action[5:], pipe)
        handler: Callable[[dict[str, str]], str] = getattr(self, f"do_{action}")
        return handler(args)

    def _show(self, key: str, pipe: str) -> str:
        formatter, is_json = self.p.shows[key]
        data = formatter(self.sw, self.config)
        if pipe:
            name, _, rest = pipe.partition(" ")
            versioned = self.p.json_pipe == "json" and re.fullmatch(r"json version (\d+|latest)", pipe)
            if self.p.json_pipe and (pipe == self.p.json_pipe or versioned):
                return to_json(data) if is_json else data
            text = self._as_shown(key, data, is_json)
            if name in ("include", "inc") and rest:
                return "\n".join(ln for ln in text.splitlines() if re.search(rest, ln))
            if name in ("section", "sec") and rest and self.p.section_filter:
                return eos_running_section(text, rest.strip().strip('"'))
            raise CliError(self.p.unknown_error.format(token=name, index=0))
        return self._as_shown(key, data, is_json)

    def _as_shown(self, key: str, data: object, is_json: bool) -> str:
        """A show command's output as typed without the JSON pipe."""
        if not is_json:
            return str(data)
        text_form = TEXT_FORMS.get((self.p.name, key))
        return text_form(self.sw, self.config) if text_form else _as_text(data)

    def run_api(self, line: str, fmt: str) -> dict[str, object]:
        """One eAPI command: its JSON object (``fmt='json'``) or ``{"output": text}``. Raises CliError
        as the CLI would, and NotConvertedError for a show command that has no JSON form."""
        line = line.strip()
        command, _, pipe = line.partition(" | ")
        words = [(m.group(0), m.start()) for m in re.finditer(r"\S+", command)]
        if not words:
            return {} if fmt == "json" else {"output": ""}
        action, args = self._lookup(command, words)
        if action == "logout":
            action = "ok"
        if fmt == "json" and action.startswith("show:"):
            formatter, is_json = self.p.shows[action[5:]]
            if not is_json:
                raise NotConvertedError(line)
            return dict(formatter(self.sw, self.config))
        output = self._run(action, args, pipe.strip())
        if fmt == "json":
            return {"messages": [output]} if output else {}
        return {"output": output + "\n" if output else ""}

    # --- modes --------------------------------------------------------------------------------
    def do_ok(self, args: dict[str, str]) -> str:
        return ""

    def do_pagination(self, args: dict[str, str]) -> str:
        return "Pagination disabled."

    def do_width(self, args: dict[str, str]) -> str:
        return f"Width set to {args['n']} columns."

    def do_unknown(self, args: dict[str, str]) -> str:
        raise CliError(self.p.unknown_error.format(token="write", index=0))

    def do_enable(self, args: dict[str, str]) -> str:
        self.mode = "enable"
        return ""

    def do_disable(self, args: dict[str, str]) -> str:
        self.mode = "user"
        return ""

    def do_configure(self, args: dict[str, str]) -> str:
        self.mode = "config"
        return ""

    def do_configure_session(self, args: dict[str, str]) -> str:
        name = args["name"]
        self.sw.sessions.setdefault(name, self.sw.running.copy())
        self.session, self.mode = name, "config"
        return ""

    def do_exit(self, args: dict[str, str]) -> str:
        if self.mode in ("if", "svi", "bgp", "vlan"):
            self.mode, self.port, self.svi = "config", None, None
        else:
            self.mode, self.session = "enable", None
        return ""

    def do_end(self, args: dict[str, str]) -> str:
        self.mode, self.port, self.svi, self.session = "enable", None, None, None
        return ""

    def do_commit(self, args: dict[str, str]) -> str:
        if self.session is None:
            raise CliError("% Not in a configuration session")
        new = self.sw.sessions.pop(self.session)
        self.session, self.mode, self.port = None, "enable", None
        error = self.sw.commit(new)
        return f"% Failed to apply some link settings: {error}" if error else ""

    def do_abort(self, args: dict[str, str]) -> str:
        if self.session is None:
            raise CliError("% Not in a configuration session")
        self.sw.sessions.pop(self.session, None)
        self.session, self.mode, self.port = None, "enable", None
        return ""

    def do_session_diffs(self, args: dict[str, str]) -> str:
        if self.session is None:
            raise CliError("% Not in a configuration session")
        running = self.p.shows["running"][0]
        before = running(self.sw, self.sw.running).splitlines()
        after = running(self.sw, self.config).splitlines()
        return "\n".join(difflib.unified_diff(before, after, "system:/running-config",
                                              f"session:/{self.session}-session-config", lineterm=""))

    def do_session_config(self, args: dict[str, str]) -> str:
        if self.session is None:
            raise CliError("% Not in a configuration session")
        return str(self.p.shows["running"][0](self.sw, self.config))

    def do_save(self, args: dict[str, str]) -> str:
        self.sw.save()
        return self.p.save_message

    def do_hostname(self, args: dict[str, str]) -> str:
        self.config.hostname = args["name"]
        return ""

    # --- interfaces ---------------------------------------------------------------------------
    def _port(self, text: str) -> str:
        """The canonical port a typed name designates. Slots are real: a one-slot Mellanox switch has
        only ``1/N`` (``2/5`` does not exist, it is not read as ``1/5``); EOS names the slot too."""
        port = canonical_port(self.p.name, text)
        if port is None or port not in self.config.ports:
            raise CliError(self.p.missing_interface.format(keyword=self.p.interface_keyword, text=text))
        return port

    def do_interface(self, args: dict[str, str]) -> str:
        if self.enter_svi(args["port"]):  # EOS ``interface Vlan10``
            return ""
        self.port, self.mode, self.svi = self._port(args["port"]), "if", None
        return ""

    def do_interface_inline(self, args: dict[str, str]) -> str:
        """Onyx's one-line form: ``interface ethernet 1/1 mtu 9000 force`` from config mode."""
        return self._inline("if", args["rest"], port=self._port(args["port"]))

    def _changed(self) -> str:
        if self.session is None and self.port is not None:
            error = self.sw.sync_port(self.port)
            if error:
                return f"% Failed to apply to the port: {error}"
        return ""

    def do_port_mtu(self, args: dict[str, str]) -> str:
        """Ethernet MTU in bytes. Onyx changes the MTU of an enabled port only with ``force`` (its
        CLI refuses otherwise); EOS takes the bare value. InfiniBand has its own grammar (do_ib_mtu)."""
        text = args["mtu"]
        if not text.isdigit():
            raise CliError(self.p.unknown_error.format(token=text, index=1))
        value = int(text)
        low, high = self.p.mtu_range
        if not low <= value <= high:
            raise CliError(f"% MTU {value} is out of range. Valid range is {low}-{high}.")
        assert self.port is not None
        self._require_force(args, "MTU")
        self.config.ports[self.port].mtu = value
        return self._changed()

    def do_ib_mtu(self, args: dict[str, str]) -> str:
        """InfiniBand MTU: one of the IB link MTUs by name (256 .. 4K), never an Ethernet byte count."""
        value = IB_MTU_WORDS.get(args["mtu"].upper())
        if value is None:
            raise CliError(f"% Invalid MTU {args['mtu']}. Valid values are: {', '.join(IB_MTUS.values())}")
        assert self.port is not None
        self.config.ports[self.port].mtu = value
        return self._changed()

    def _require_force(self, args: dict[str, str], what: str) -> None:
        """Onyx refuses to change the MTU or speed of an administratively enabled port without ``force``."""
        assert self.port is not None
        if self.p.force_for_live_port_change and "force" not in args and self.config.ports[self.port].admin_up:
            raise CliError(f"% Cannot change {what} while interface {self.p.interface_keyword} {self.port} is "
                           "enabled. Shut it down first or use the force option")

    def do_port_description(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].description = args["text"].strip('"')
        return ""

    def do_port_no_description(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].description = ""
        return ""

    def do_port_speed(self, args: dict[str, str]) -> str:
        """Ethernet speed (``100G``, EOS ``100gfull``); the IB names (edr ...) belong to do_ib_speed."""
        match = re.fullmatch(r"(\d+(?:\.\d+)?)g(?:full)?", args["speed"].lower())
        if not match or float(match.group(1)) not in ETHERNET_SPEEDS:
            raise CliError(self.p.unknown_error.format(token=args["speed"], index=1))
        assert self.port is not None
        self._require_force(args, "speed")
        return self._set_speed(float(match.group(1)), args["speed"])

    def do_ib_speed(self, args: dict[str, str]) -> str:
        """InfiniBand speed by name (sdr .. ndr); Ethernet values such as ``100G`` are refused."""
        value = IB_SPEEDS.get(args["speed"].lower())
        if value is None:
            raise CliError(f"% Invalid speed {args['speed']}. Valid values are: {', '.join(IB_SPEEDS)}")
        return self._set_speed(value, args["speed"])

    def _set_speed(self, value: float, typed: str) -> str:
        if value > self.sw.cfg.default_speed_gbps:
            raise CliError(f"% Speed {typed} is not supported on this interface")
        assert self.port is not None
        self.config.ports[self.port].speed_gbps = value
        return ""

    def do_port_shutdown(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].admin_up = False
        return self._changed()

    def do_port_no_shutdown(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].admin_up = True
        return self._changed()


def _as_text(data: object, indent: str = "") -> str:
    """Plain ``key : value`` text for show commands typed without the JSON pipe."""
    lines: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
                lines.append(f"{indent}{key:<30}: {' '.join(str(v) for v in value) or 'none'}")
            elif isinstance(value, (dict, list)):
                lines.append(f"{indent}{key}:")
                lines.append(_as_text(value, indent + "  "))
            else:
                lines.append(f"{indent}{key:<30}: {value}")
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, dict) and "header" in item:
                lines.append(f"{indent}{item['header']}:")
                lines.append(_as_text({k: v for k, v in item.items() if k != "header"}, indent + "  "))
            else:
                lines.append(_as_text(item, indent))
            lines.append("")
    return "\n".join(ln for ln in lines if ln is not None)
