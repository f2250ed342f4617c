"""WekaFS, when the inventory declares it: cluster status OK, every backend and drive up, the
filesystem present and mounted at the declared point on every client. Not declared: no checks."""

from __future__ import annotations

import pytest

FIX_TAGS = "weka"
pytestmark = pytest.mark.applies(declared="racfg_weka")


def COMMANDS(hv, gv, sysctl_keys):
    """Where Weka is declared: the cluster's status, backends, drives and filesystems, the mount table."""
    if not gv.get("racfg_weka"):
        return {}
    return {"weka_status": "weka status", "weka_hosts": "weka cluster container 2>/dev/null || weka cluster host -v",
            "weka_drives": "weka cluster drive", "weka_fs": "weka fs", "mounts": "cat /proc/mounts"}


def _weka(ctx, probe, key, verdict):
    weka = ctx.site.group_vars.get("racfg_weka")
    if not weka:
        pytest.skip("no Weka in the inventory")
    section = probe.section(key, allow_fail=True)
    if section.missing:
        if not weka.get("dist"):
            pytest.skip("weka CLI not installed: the inventory gives no Weka distribution "
                        "(software.weka.dist), so deploy installs none")
        verdict.expect("weka CLI installed", "weka not found", ok=False)
    if not section.ok:
        raise RuntimeError(f"weka {key.removeprefix('weka_')} failed: {section.out.strip()[:160]}")
    return weka, section.out


@pytest.mark.roles("storage")
def test_cluster_status(node, probe, verdict, ctx):
    from racfg.hostfacts.weka import parse_status

    _, out = _weka(ctx, probe, "weka_status", verdict)
    status = parse_status(out)
    verdict.expect("OK", status.status + (" (rebuilding)" if status.rebuilding else ""), ok=status.ok)


@pytest.mark.roles("storage")
def test_backends_up(node, probe, verdict, ctx):
    from racfg.hostfacts.weka import parse_cluster_containers

    _, out = _weka(ctx, probe, "weka_hosts", verdict)
    down = [f"{c.hostname} {c.status}" for c in parse_cluster_containers(out) if not c.up]
    verdict.expect("every backend UP", "; ".join(down) or "every backend UP", ok=not down)


@pytest.mark.roles("storage")
def test_drives_up(node, probe, verdict, ctx):
    from racfg.hostfacts.weka import parse_cluster_drives

    _, out = _weka(ctx, probe, "weka_drives", verdict)
    down = [f"{d.hostname} {d.uuid} {d.status}" for d in parse_cluster_drives(out) if d.status != "ACTIVE"]
    verdict.expect("every drive ACTIVE", "; ".join(down) or "every drive ACTIVE", ok=not down)


@pytest.mark.roles("storage")
def test_filesystem_present(node, probe, verdict, ctx):
    from racfg.hostfacts.weka import parse_fs

    weka, out = _weka(ctx, probe, "weka_fs", verdict)
    names = {f.name: f for f in parse_fs(out)}
    want = weka.get("filesystem", "default")
    verdict.expect(f"{want} ready", f"{want} ready" if want in names and names[want].ready else
                   f"{want} {'not ready' if want in names else 'missing'}", ok=want in names and names[want].ready)


@pytest.mark.roles("dgx")
def test_mounted(node, probe, verdict, ctx):
    from racfg.hostfacts.mounts import mount_at, parse_proc_mounts

    weka = ctx.site.group_vars.get("racfg_weka")
    if not weka or weka.get("clients") != "dgx":
        pytest.skip("Weka is not mounted on dgx hosts in this inventory")
    _weka(ctx, probe, "weka_status", verdict)
    point = weka.get("mount_point", "/mnt/weka")
    found = mount_at(parse_proc_mounts(probe.section("mounts").out), point)  # the mount visible there
    verdict.expect(f"wekafs at {point}", f"{found.fstype} at {point}" if found else "not mounted",
                   ok=found is not None and found.fstype == "wekafs")
