"""Storage hosts: the declared NVMe drives are present, as many as declared, of the declared
model and size. Drives are read from ``lsblk`` (what the kernel has), so a drive that left the
kernel (failed, or detached) is missing."""

from __future__ import annotations

import shlex

import pytest

FIX_TAGS = "nvme_storage"
pytestmark = pytest.mark.roles("storage")


def COMMANDS(hv, gv, sysctl_keys):
    """On a storage host: the block devices, and each declared drive path as lsblk resolves it
    (also read by test_consistency)."""
    if hv.get("racfg_role") != "storage":
        return {}
    commands = {"lsblk": "lsblk -J -b -o NAME,PATH,TYPE,SIZE,MODEL,SERIAL"}
    for drive in hv.get("racfg_drives", []):
        path = shlex.quote(drive["path"])
        lsblk = f"lsblk -J -b -d -o NAME,PATH,TYPE,SIZE,MODEL,SERIAL {path}"
        commands[f"drive:{drive['path']}"] = f"test -b {path} && {lsblk}"
    return commands


def _read(probe, path):
    """The block device at a declared path as lsblk reads it, or None when there is none."""
    from racfg.hostfacts.nvme import parse_lsblk_json

    section = probe.section(f"drive:{path}", allow_fail=True)
    found = parse_lsblk_json(section.out) if section.ok else []
    # lsblk names the device the path resolves to (a lab's /dev/nvme0n1 is a loop device)
    exact = [d for d in found if d.path == path]
    return (exact or found or [None])[0]


def _drive(drive, probe, verdict):
    have = _read(probe, drive.label)
    if have is None:
        verdict.expect(f"{drive.label} present", "missing", ok=False,
                       fix=f"check or replace the drive {drive.label} on {drive.target}")
    return have


def test_present(drive, probe, verdict):
    """The declared path is a block device the kernel has: expected and found both shown (a pass
    says what it compared: the path, and what lsblk read there)."""
    have = _drive(drive, probe, verdict)
    verdict.expect(f"a block device at {drive.label}", f"{have.path} ({have.type}): "
                   f"{have.model or 'no model reported'}, {have.size_bytes} bytes", ok=True)


def test_count(node, probe, verdict):
    declared = [d["path"] for d in node.vars.get("racfg_drives", [])]
    present = [p for p in declared if _read(probe, p) is not None]
    verdict.expect(len(declared), len(present),
                   fix=f"check or replace {', '.join(sorted(set(declared) - set(present)))} on {node.target}")


def test_model(drive, probe, verdict, ctx):
    want = drive.drive.get("model")
    if not want:
        pytest.skip("the inventory declares no drive model for this drive")
    from racfg.validate.expectations import drive_models_unchecked

    why = drive_models_unchecked(ctx.host_vars(drive.target))
    if why is not None:
        pytest.skip(f"{want}: not checked ({why})")
    have = _drive(drive, probe, verdict)
    if not have.model:
        pytest.skip(f"{drive.label} reports no model (not an NVMe controller, e.g. a loop device)")
    verdict.expect(want, have.model, ok=want.lower() in have.model.lower(),
                   fix=f"replace {drive.label} on {drive.target} with a {want}")


def test_size(drive, probe, verdict):
    from racfg.hostfacts.nvme import sizes_match

    want = drive.drive.get("size")
    if not want:
        pytest.skip("the inventory declares no size for this drive")
    have = _drive(drive, probe, verdict)
    ok = have.size_bytes is not None and sizes_match(want, have.size_bytes)
    verdict.expect(want, f"{have.size_bytes} bytes", ok=ok,
                   fix=f"replace {drive.label} on {drive.target} with a {want} drive")
