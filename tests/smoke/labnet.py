"""Data-plane set-up of the smoke lab without a deploy: addresses and jumbo MTU.

``racfg lab up`` cables the hosts (and shapes every cable both ways) but leaves their data NICs
unaddressed until a deploy's fabric role runs; measuring needs only addresses and MTU, so the
tests set them directly (seconds, instead of an Ansible run).
"""

from __future__ import annotations

from labsupport import LabHandle

from racfg_lab import api

JUMBO = 9000


def configure_data_plane(lab: LabHandle) -> None:
    """Inventory addresses on every data NIC, MTU 9000 on the NICs and their switch ports."""
    for cable in lab.state.cables:
        nic = next(n for n in lab.host(cable.host).nics if n.name == cable.nic)
        api.set_link(lab.site, cable.host, cable.nic, mtu=JUMBO)
        lab.exec(cable.host, ["ip", "link", "set", cable.nic, "mtu", str(JUMBO), "up"])
        lab.exec(cable.host, ["ip", "addr", "replace", str(nic.address), "dev", cable.nic])
