"""The emulated CLI's PFC and RoCE commands: global (Onyx ``dcb priority-flow-control``, ``roce``) and
per port (Onyx ``dcb priority-flow-control mode on``, EOS ``priority-flow-control priority N no-drop``).

racfg sets them as the inventory says (``fabric.pfc``, ``roce``) and validate and drift read them
back; the lab keeps them in the running config as a real switch does. The grammar of each platform
is in its folder's grammar.py (eos/, mlnx/); the settings live in the running config (state.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from racfg_lab.switchcli.errors import CliError

if TYPE_CHECKING:
    from racfg_lab.switchcli.state import SwitchConfig


class PfcCommands:
    """Mixed into the CLI session (engine.CliSession), which provides these attributes."""

    port: str | None
    config: SwitchConfig

    @staticmethod
    def _prio(text: str) -> int:
        if not text.isdigit() or not 0 <= int(text) <= 7:
            raise CliError(f"% Invalid priority {text}. Valid range is 0-7.")
        return int(text)

    def do_pfc_global_on(self, args: dict[str, str]) -> str:
        self.config.pfc = True
        return ""

    def do_pfc_global_off(self, args: dict[str, str]) -> str:
        self.config.pfc = False
        return ""

    def do_pfc_prio_on(self, args: dict[str, str]) -> str:
        prio = self._prio(args["prio"])
        self.config.pfc_priorities = sorted({*self.config.pfc_priorities, prio})
        return ""

    def do_pfc_prio_off(self, args: dict[str, str]) -> str:
        prio = self._prio(args["prio"])
        self.config.pfc_priorities = [p for p in self.config.pfc_priorities if p != prio]
        return ""

    def do_roce_on(self, args: dict[str, str]) -> str:
        self.config.roce = True
        return ""

    def do_roce_off(self, args: dict[str, str]) -> str:
        self.config.roce = False
        return ""

    def do_pfc_port_on(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].pfc = True
        return ""

    def do_pfc_port_off(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.config.ports[self.port].pfc = False
        return ""

    def do_pfc_port_prio_on(self, args: dict[str, str]) -> str:
        assert self.port is not None
        pc = self.config.ports[self.port]
        pc.pfc_priorities = sorted({*pc.pfc_priorities, self._prio(args["prio"])})
        return ""

    def do_pfc_port_prio_off(self, args: dict[str, str]) -> str:
        assert self.port is not None
        pc = self.config.ports[self.port]
        prio = self._prio(args["prio"])
        pc.pfc_priorities = [p for p in pc.pfc_priorities if p != prio]
        return ""
