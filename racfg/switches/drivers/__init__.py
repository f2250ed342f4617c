"""Platform drivers, one per switch OS, all with the SwitchDriver shape."""

from __future__ import annotations

from racfg.errors import UsageError
from racfg.switches.drivers.eos import EosDriver
from racfg.switches.drivers.mlnx import MlnxosIbDriver, OnyxDriver
from racfg.switches.drivers.switch_driver import Change, SwitchDriver

DRIVERS: dict[str, type[SwitchDriver]] = {"onyx": OnyxDriver, "eos": EosDriver, "mlnxos-ib": MlnxosIbDriver}


def get_driver(platform: str) -> SwitchDriver:
    """The driver for ``onyx``, ``eos`` or ``mlnxos-ib``."""
    try:
        return DRIVERS[platform]()
    except KeyError:
        raise UsageError(f"unknown switch platform {platform!r}: expected one of {', '.join(DRIVERS)}") from None


__all__ = ["DRIVERS", "Change", "SwitchDriver", "get_driver"]
