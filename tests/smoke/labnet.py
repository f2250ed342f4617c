"""Data-plane set-up of the smoke lab without a deploy (addresses and jumbo MTU), and the smoke lab as a
site of its own for a module that changes its shape.

``racfg lab up`` cables the hosts (and shapes every cable both ways) but leaves their data NICs
unaddressed until a deploy's fabric role runs; measuring needs only addresses and MTU, so the
tests set them directly (seconds, instead of an Ansible run).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from labsupport import LabHandle, running_lab

from racfg_lab import api

JUMBO = 9000
SMOKELAB = Path(__file__).parent / "smokelab.yaml"


def configure_data_plane(lab: LabHandle) -> None:
    """Inventory addresses on every data NIC, MTU 9000 on the NICs and their switch ports."""
    for cable in lab.state.cables:
        nic = next(n for n in lab.host(cable.host).nics if n.name == cable.nic)
        api.set_link(lab.site, cable.host, cable.nic, mtu=JUMBO)
        lab.exec(cable.host, ["ip", "link", "set", cable.nic, "mtu", str(JUMBO), "up"])
        lab.exec(cable.host, ["ip", "addr", "replace", str(nic.address), "dev", cable.nic])


@contextmanager
def smokelab_as(site: str, octet: int, directory: Path,
                edit: Callable[[str], str] = lambda text: text) -> Iterator[LabHandle]:
    """tests/smoke/smokelab.yaml as site ``site`` on 198.18.<octet>.0/24 and 198.19.<octet>.0/24, its text
    changed by ``edit``, running with its data plane set; torn down after."""
    text = re.sub(r"^  name: smokelab$", f"  name: {site}", SMOKELAB.read_text(), count=1, flags=re.M)
    text = edit(re.sub(r"\b198\.(18|19)\.56\.", rf"198.\g<1>.{octet}.", text))
    assert f"name: {site}" in text and "198.18.56." not in text
    inventory = directory / f"{site}.yaml"
    inventory.write_text(text)
    with running_lab(inventory) as handle:
        configure_data_plane(handle)
        yield handle
