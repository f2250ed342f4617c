"""racfg on the oldest and the newest ansible-core it supports: deploy, a no-change deploy and validate
of inventory/lab.yaml on a real lab, with whatever ansible-core this venv has.

CI runs this module in the venvs of ansible-core 2.16 (Python 3.11) and 2.21 (Python 3.13), made and
run by scripts/ansible-versions.sh; the main venv (2.19) skips it (marker ``versions``), where
tests/deploy/test_deploy_lab.py and tests/validate/test_validate_lab.py cover the same and more.
One test, one lab: the steps depend on each other and each costs a deploy.

The lab is inventory/lab.yaml under a site of its own, ``verlab<N>`` on 198.18.N.0/24 and 198.19.N.0/24
(N: ``RACFG_VERSIONS_SUBNET``, 87 unless scripts/ansible-versions.sh gives each version its own), so it
never meets another module's lab nor the other version's, which the script runs at the same time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest
import sitelab

pytestmark = [pytest.mark.lab, pytest.mark.versions]

REPO = Path(__file__).resolve().parents[2]
SUBNET = int(os.environ.get("RACFG_VERSIONS_SUBNET", "87"))
SITE = f"verlab{SUBNET}"


def site_inventory(directory: Path) -> Path:
    """inventory/lab.yaml with its own site name and subnets (198.18.0.x -> 198.18.SUBNET.x ...)."""
    text = (REPO / "inventory" / "lab.yaml").read_text()
    text = re.sub(r"^  name: lab$", f"  name: {SITE}", text, count=1, flags=re.M)
    text = re.sub(r"\b198\.(18|19)\.0\.", rf"198.\1.{SUBNET}.", text)
    assert f"name: {SITE}" in text and "198.18.0." not in text
    path = directory / "lab.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sitelab.DeployedSite]:
    root = tmp_path_factory.mktemp(SITE)
    with testing.running_lab(site_inventory(root)) as handle:
        yield sitelab.DeployedSite(handle, root / "state", inventory=handle.inventory)


def ansible_core_version() -> str:
    from ansible.release import __version__

    return __version__


def test_deploy_then_a_no_change_deploy_then_validate_pass_on_this_ansible_core(site):
    version = ansible_core_version()
    first = site.racfg("deploy", str(site.inventory), "--yes", "--format", "json")
    assert first.returncode == 0, f"ansible-core {version}: " + first.stdout[-3000:] + first.stderr[-3000:]
    hosts = {h["host"]: h for h in json.loads(first.stdout)["hosts"]}
    assert set(hosts) == {"dgx01", "dgx02", "stor01", "stor02", "sw1"}
    assert all(h["failed"] == 0 and h["unreachable"] == 0 for h in hosts.values()), hosts
    assert all(hosts[name]["changed"] > 0 for name in ("dgx01", "stor01", "sw1")), hosts
    # what the roles' templates rendered reached the hosts (the racfg_template lookup and the template tasks)
    [dgx01] = [h for h in site.lab.cluster.hosts if h.name == "dgx01"]
    etc_hosts = site.lab.ssh("stor01", "cat /etc/hosts").stdout
    assert re.search(rf"^{re.escape(str(dgx01.nics[0].address.ip))} (.* )?dgx01$", etc_hosts, re.M), etc_hosts
    assert site.lab.ssh("dgx01", f"cat /sys/class/net/{dgx01.nics[0].name}/mtu").stdout.strip() == "9000"

    again = site.racfg("deploy", str(site.inventory), "--yes", "--format", "json")
    assert again.returncode == 0, f"ansible-core {version}: " + again.stdout[-3000:] + again.stderr[-3000:]
    changed = {h["host"]: h["changed"] for h in json.loads(again.stdout)["hosts"]}
    assert changed == dict.fromkeys(hosts, 0), f"ansible-core {version}: the re-run changed {changed}"

    site.settled()  # time sync and LLDP converge in seconds after the deploy started them
    code, report = site.validate()
    assert code == 0 and report["summary"]["fail"] == 0, (version, report["summary"])
    assert report["summary"]["pass"] > 100, report["summary"]
