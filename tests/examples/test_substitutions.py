"""The lab's substitutions without a lab: what each example needs, and that nothing changes without them.

The examples pin MLNX_OFED, declare drive models and (ra-infiniband) use InfiniBand NICs; the
lab provider replaces each by variables for its runs only. Here: which substitutions each example
gets, that preflight, the fabric templates and the validators keep their original meaning with
NO_OVERRIDES (a real site), and take the substitution's skip (with its reason) when a provider sets it.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.deploy.preflight import run_preflight
from racfg.errors import UsageError
from racfg.inventory import load_cluster
from racfg.render import group_vars, write_rendered
from racfg.results import Status
from racfg.validate.context import RenderedSite, ValidateContext
from racfg.validate.expectations import drive_models_unchecked, expected_packages, role_defaults
from racfg.validate.probe import HostProbe, Section
from racfg.validate.validate_run import ValidateOptions, run_checks
from racfg_lab.substitutions import (
    CHECK_DRIVE_MODEL,
    DRIVE_MODEL_REASON,
    IPOIB_REASON,
    IPOIB_UNAVAILABLE,
    RDMA_DEVICES_REASON,
    RDMA_DEVICES_UNAVAILABLE,
    inventory_substitutions,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "inventory"
FABRIC_TEMPLATES = REPO / "roles" / "fabric" / "templates"


def lab_overrides(inventory: str) -> ConnectionOverrides:
    """What the lab provider hands the commands for ``inventory`` (its inventory part, no lab needed)."""
    subs = inventory_substitutions(load_cluster(EXAMPLES / inventory))
    return ConnectionOverrides(provider="lab", substitutions=tuple(subs.lines), host_vars=subs.host_vars)


@pytest.mark.parametrize(("inventory", "ofed", "drives", "ipoib"), [
    ("lab.yaml", False, False, False),
    ("ra-ethernet.yaml", True, True, False),
    ("ra-arista.yaml", True, True, False),
    ("ra-infiniband.yaml", True, False, True),
    ("ra-leafspine.yaml", True, True, False),
    ("ra-leafspine-eos.yaml", True, True, False),
])
def test_each_example_gets_exactly_the_substitutions_it_needs(inventory, ofed, drives, ipoib):
    overrides = lab_overrides(inventory)
    text = "\n".join(overrides.substitutions)
    assert ("MLNX_OFED 4.5-1.0.1.0 -> the distribution's inbox RDMA stack" in text) is ofed
    assert (overrides.host_vars.get("racfg_ofed", {}).get("flavor") == "inbox") is ofed
    assert ("declared drive models -> not checked" in text) is drives
    assert (overrides.host_vars.get(CHECK_DRIVE_MODEL) is False) is drives
    assert ("InfiniBand NICs -> Ethernet stand-ins" in text) is ipoib
    assert (overrides.host_vars.get(IPOIB_UNAVAILABLE) == IPOIB_REASON) is ipoib
    assert (overrides.host_vars.get(RDMA_DEVICES_UNAVAILABLE) == RDMA_DEVICES_REASON) is ipoib  # IB needs devices
    assert len(overrides.substitutions) == ofed + drives + ipoib


def test_outside_the_lab_the_pinned_mlnx_ofed_is_rendered_and_its_missing_source_refused(tmp_path: Path):
    cluster = load_cluster(EXAMPLES / "ra-infiniband.yaml")
    write_rendered(cluster, tmp_path)
    site = RenderedSite.load(tmp_path)
    assert site.group_vars["racfg_ofed"]["flavor"] == "mlnx"
    assert not any(IPOIB_UNAVAILABLE in hv or RDMA_DEVICES_UNAVAILABLE in hv for hv in site.hosts.values())
    with pytest.raises(UsageError, match=r"MLNX_OFED source /srv/mlnx/.* does not exist"):
        run_preflight(cluster, [], NO_OVERRIDES)


def test_in_the_lab_preflight_accepts_the_substituted_ofed():
    cluster = load_cluster(EXAMPLES / "ra-infiniband.yaml")
    run_preflight(cluster, [], lab_overrides("ra-infiniband.yaml"))  # no UsageError: nothing to refuse
    gv = group_vars(cluster)
    assert "rdma-core" not in expected_packages(gv, {}, "bookworm")
    assert expected_packages(gv, lab_overrides("ra-infiniband.yaml").host_vars, "bookworm")["rdma-core"] == "ofed"


@pytest.mark.parametrize(("reason", "has_mode"), [("", True), (IPOIB_REASON, False)])
def test_fabric_templates_carry_the_ipoib_mode_unless_the_provider_says_it_cannot_be_set(reason, has_mode):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(FABRIC_TEMPLATES), undefined=jinja2.StrictUndefined)
    nic = {"name": "ib0", "address": "198.19.2.11/24", "mtu": 4092, "switch": "sb7800", "port": "1/1"}
    values = {"ansible_managed": "racfg", "racfg_fabric": {"type": "infiniband", "ipoib_mode": "datagram"},
              "fabric_ipoib_unavailable": reason, "item": nic, "common_data_nics": [nic]}
    for name, mode_line in (("data.network.j2", "Mode=datagram"), ("ifupdown-data.j2", "/sys/class/net/ib0/mode"),
                            ("netplan-data.yaml.j2", "infiniband-mode: datagram")):
        text = env.get_template(name).render(**values)
        assert (mode_line in text) is has_mode, (name, text)
        assert "4092" in text and "198.19.2.11/24" in text  # MTU and address apply either way


IB_GROUP = {"racfg_site": "rec", "racfg_fabric": {"type": "infiniband", "speed_gbps": 100.0, "ib_mtu": 4096,
                                                  "ipoib_mode": "datagram"},
            "racfg_ofed": {"flavor": "mlnx", "version": "4.5-1.0.1.0"}, "racfg_weka": None,
            "racfg_nvidia_driver": None, "racfg_tuning": {"profile": "none"}}
IB_HOST = {"ansible_host": "198.18.2.11", "racfg_role": "storage", "racfg_gpus": 0, "racfg_model": "BigTwin",
           "racfg_nics": [{"name": "ib0", "address": "198.19.2.11/24", "mtu": 4092, "switch": "sb7800",
                           "port": "1/1", "speed_gbps": 100.0}],
           "racfg_drives": [{"path": "/dev/nvme0n1", "model": "Micron 9200", "size": None}]}
LSBLK_LOOP = Section(0, '{"blockdevices": [{"name": "/dev/nvme0n1", "kname": "loop3", "path": "/dev/nvme0n1", '
                        '"type": "loop", "size": 1073741824, "model": null, "serial": null, "mountpoint": null}]}')
NO_MODE = Section(1, "cat: /sys/class/net/ib0/mode: No such file or directory")
NOT_FOUND = Section(127, "sh: 1: ofed_info: not found")


def check(glob: str, sections: dict[str, Section], overrides: ConnectionOverrides):
    site = RenderedSite(group_vars=IB_GROUP, hosts={"h1": IB_HOST}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml", overrides=overrides)
    ctx._probes = {"h1": HostProbe("h1", sections=sections)}
    ctx._switch_facts = {}
    results = run_checks(ctx, ValidateOptions(checks=[glob]))
    assert len(results) == 1, [r.check for r in results]
    return results[0]


def test_ipoib_mode_missing_on_a_real_host_is_a_failure():
    result = check("*/rdma/ipoib_mode*", {"ipoib_mode:ib0": NO_MODE}, NO_OVERRIDES)
    assert result.status is Status.FAIL, result
    assert "no IPoIB mode" in (result.actual or "") and result.fix


def test_ipoib_mode_set_on_a_real_host_passes():
    assert check("*/rdma/ipoib_mode*", {"ipoib_mode:ib0": Section(0, "datagram\n")}, NO_OVERRIDES).status is Status.PASS


def test_ipoib_mode_in_the_lab_is_skipped_with_the_providers_reason():
    result = check("*/rdma/ipoib_mode*", {"ipoib_mode:ib0": NO_MODE}, lab_overrides("ra-infiniband.yaml"))
    assert result.status is Status.SKIP and IPOIB_REASON in result.message


def test_drive_model_in_the_lab_is_skipped_with_the_providers_reason():
    assert check("*/storage/model*", {"drive:/dev/nvme0n1": LSBLK_LOOP}, NO_OVERRIDES).status is Status.SKIP
    result = check("*/storage/model*", {"drive:/dev/nvme0n1": LSBLK_LOOP}, lab_overrides("ra-ethernet.yaml"))
    assert result.status is Status.SKIP and DRIVE_MODEL_REASON in result.message


def test_ofed_pin_outside_the_lab_fails_without_mlnx_ofed_and_the_lab_skips_it_saying_why():
    assert check("*/rdma/ofed_version", {"ofed_info": NOT_FOUND}, NO_OVERRIDES).status is Status.FAIL
    result = check("*/rdma/ofed_version", {"ofed_info": NOT_FOUND}, lab_overrides("ra-infiniband.yaml"))
    assert result.status is Status.SKIP and "MLNX_OFED 4.5-1.0.1.0 not checked" in result.message
    assert "inbox" in result.message


def test_drive_models_unchecked_names_the_providers_reason_else_the_roles_own():
    assert drive_models_unchecked({}) is None
    assert drive_models_unchecked({"nvme_storage_check_model": True}) is None
    assert drive_models_unchecked({"nvme_storage_check_model": False,
                                   "nvme_storage_check_model_reason": DRIVE_MODEL_REASON}) == DRIVE_MODEL_REASON
    assert drive_models_unchecked({"nvme_storage_check_model": False}) == \
        role_defaults("nvme_storage")["nvme_storage_check_model_reason"]
