"""What every platform's show output is made of: the ports in order, the uptime, JSON as the CLIs print it."""

from __future__ import annotations

import json
import time
from typing import Any

from racfg.switches.ports import port_sort_key
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch


def _ports(sw: EmulatedSwitch, config: SwitchConfig) -> list[str]:
    return sorted(config.ports, key=port_sort_key)


def _uptime(sw: EmulatedSwitch) -> float:
    return time.time() - sw.boot_time

def to_json(data: Any) -> str:
    return json.dumps(data, indent=4)
