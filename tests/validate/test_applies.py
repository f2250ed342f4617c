"""Checks that cannot apply to the site are not generated (not skipped once per host)."""

from __future__ import annotations

from racfg.validate.context import RenderedSite, ValidateContext
from racfg.validate.probe import HostProbe
from racfg.validate.validate_run import ValidateOptions, run_checks
from tests.validate.test_checks_recorded import GROUP, IB, host


def checks(group: dict, **options) -> set[str]:
    site = RenderedSite(group_vars=group, hosts={"h1": host("dgx")}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml")
    ctx._probes = {"h1": HostProbe("h1", sections={})}
    ctx._switch_facts = {}
    return {r.check.split("[")[0] for r in run_checks(ctx, ValidateOptions(**options))}


def test_infiniband_checks_exist_on_an_infiniband_fabric_only() -> None:
    ib_checks = {"h1/rdma/ib_ports_active", "h1/rdma/ib_mtu", "h1/rdma/ib_rate", "h1/rdma/ipoib_mode"}
    assert not ib_checks & checks(GROUP, categories=["rdma"])
    assert ib_checks <= checks(IB, categories=["rdma"])


def test_lldp_checks_exist_off_infiniband_only() -> None:
    assert "h1/fabric/lldp_neighbour" in checks(GROUP, categories=["fabric"])
    assert "h1/fabric/lldp_neighbour" not in checks(IB, categories=["fabric"])
    assert "h1/system/lldpd_running" not in checks(IB, categories=["system"])


def test_array_and_weka_checks_exist_only_when_declared() -> None:
    assert checks(GROUP, categories=["array", "weka"]) == set()
    declared = {**GROUP, "racfg_array": {"name": "a", "protocol": "nfs", "mount_point": "/mnt/a", "clients": "dgx"},
                "racfg_weka": {"filesystem": "default"}}
    assert {"h1/array/mounted", "h1/weka/mounted"} <= checks(declared, categories=["array", "weka"])
