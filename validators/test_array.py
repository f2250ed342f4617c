"""The external storage array's export, when the inventory declares one (``array:``): mounted on every
GPU server at the declared point, from the declared server and export, with the declared options the
kernel reports. No array declared: no checks (they cannot apply to the site)."""

from __future__ import annotations

import pytest

FIX_TAGS = "nfs_client"
pytestmark = [pytest.mark.roles("dgx"), pytest.mark.applies(declared="racfg_array")]


def COMMANDS(hv, gv, sysctl_keys):
    """The mount table, on the array's clients."""
    array = gv.get("racfg_array")
    return {"mounts": "cat /proc/mounts"} if array and array.get("clients", "dgx") == hv.get("racfg_role") else {}


def _array(ctx):
    array = ctx.site.group_vars.get("racfg_array")
    if not array:
        pytest.skip("no storage array in the inventory (array:)")
    if array.get("clients", "dgx") != "dgx":
        pytest.skip(f"array {array['name']} is mounted on no GPU server (array.clients: {array.get('clients')})")
    return array


def _fstype(array) -> str:
    from racfg.validate.expectations import role_defaults

    return str(role_defaults("nfs_client")["nfs_client_fstypes"][array["protocol"]])


def _mount(probe, array):
    from racfg.hostfacts.mounts import mount_at, parse_proc_mounts

    return mount_at(parse_proc_mounts(probe.section("mounts").out), array["mount_point"])


def _types(fstype: str) -> tuple[str, ...]:
    return ("nfs", "nfs4") if fstype == "nfs" else (fstype,)


def test_mounted(node, probe, verdict, ctx):
    array = _array(ctx)
    fstype = _fstype(array)
    want = f"{array['server']}:{array['export']} ({fstype}) at {array['mount_point']}"
    have = _mount(probe, array)
    if have is None:
        verdict.expect(want, "not mounted", ok=False)
    actual = f"{have.source} ({have.fstype}) at {array['mount_point']}"
    source_ok = have.source.rstrip("/") == f"{array['server']}:{array['export']}".rstrip("/")
    verdict.expect(want, actual, ok=source_ok and have.fstype in _types(fstype))


def test_mount_options(node, probe, verdict, ctx):
    from racfg.hostfacts.mounts import option_present, reported_options

    array = _array(ctx)
    have = _mount(probe, array)
    if have is None:
        pytest.skip(f"{array['mount_point']} is not mounted (test_mounted reports it)")
    shown, hidden = reported_options(list(array.get("mount_options") or []), have.fstype)
    missing = [o for o in shown if not option_present(o, have)]
    note = f"; not reported by the kernel, so not checked: {', '.join(hidden)}" if hidden else ""
    none = "(none the kernel reports)"
    actual = ", ".join(f"missing {o}" for o in missing) if missing else (",".join(shown) or none)
    verdict.expect(",".join(shown) or none, actual, ok=not missing,
                   message=f"mounted with {','.join(have.options)}{note}")
