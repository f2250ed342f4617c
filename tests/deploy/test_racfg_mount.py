"""roles/nfs_client/library/racfg_mount.py, the mount module racfg ships so that the wheel alone
deploys: its fstab editing on recorded tables, and the module run as Ansible runs it (a JSON
arguments file) mounting a real tmpfs from a private fstab: mounted, unchanged the second time,
remounted when its options change, nothing touched in check mode, unmounted when absent."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[2] / "roles" / "nfs_client" / "library" / "racfg_mount.py"
spec = importlib.util.spec_from_file_location("racfg_mount", MODULE)
racfg_mount = importlib.util.module_from_spec(spec)
spec.loader.exec_module(racfg_mount)

FSTAB = """# /etc/fstab: static file system information.
UUID=1234 / ext4 errors=remount-ro 0 1
old:/export /mnt/array nfs hard 0 0
tmpfs /tmp tmpfs defaults 0 0
old2:/export /mnt/array/ nfs soft 0 0
"""


def test_fstab_entry_replaced_in_place_duplicates_dropped_other_lines_kept():
    wanted = racfg_mount.entry_line("srv:/export", "/mnt/array", "nfs", "ro,hard")
    after = racfg_mount.rewrite_fstab(FSTAB, "/mnt/array", wanted)
    assert after.splitlines() == ["# /etc/fstab: static file system information.",
                                  "UUID=1234 / ext4 errors=remount-ro 0 1",
                                  "srv:/export /mnt/array nfs ro,hard 0 0", "tmpfs /tmp tmpfs defaults 0 0"]
    assert racfg_mount.rewrite_fstab(after, "/mnt/array", wanted) == after
    assert "/mnt/array" not in racfg_mount.rewrite_fstab(after, "/mnt/array", None)
    assert racfg_mount.rewrite_fstab("", "/m", "a /m nfs defaults 0 0") == "a /m nfs defaults 0 0\n"


def test_fields_with_spaces_are_escaped_as_fstab_and_proc_mounts_write_them():
    line = racfg_mount.entry_line("srv:/my export", "/mnt/my array", "nfs", "")
    assert line == "srv:/my\\040export /mnt/my\\040array nfs defaults 0 0"
    mounts = "srv:/my\\040export /mnt/my\\040array nfs4 rw,vers=4.2 0 0\n"
    live = racfg_mount.live_mount("/mnt/my array", mounts)
    assert live == ("srv:/my export", "nfs4")
    assert racfg_mount.same_mount(live, "srv:/my export", "nfs")
    assert not racfg_mount.same_mount(live, "other:/my export", "nfs")


def run_module(tmp_path: Path, check: bool = False, **args: str) -> dict:
    """The module as Ansible runs it on a host: its own Python process reading a JSON arguments file."""
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {**args, "_ansible_check_mode": check}}))
    proc = subprocess.run([sys.executable, str(MODULE), str(argfile)], capture_output=True, text=True, timeout=60)
    return json.loads(proc.stdout)


def live_options(point: Path) -> list[str] | None:
    found = racfg_mount.live_mount(str(point), Path("/proc/self/mounts").read_text())
    if found is None:
        return None
    line = [ln.split() for ln in Path("/proc/self/mounts").read_text().splitlines() if ln.split()[1] == str(point)][-1]
    return line[3].split(",")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_mounts_from_its_fstab_idempotent_remounts_on_change_check_mode_touches_nothing(tmp_path):
    point, fstab = tmp_path / "point", tmp_path / "fstab"
    fstab.write_text("# header kept\n")
    args = {"path": str(point), "src": "racfgtest", "fstype": "tmpfs", "fstab": str(fstab)}
    try:
        dry = run_module(tmp_path, check=True, opts="size=1m", **args)
        assert (dry["changed"], dry["mount_action"]) == (True, "mounted"), dry
        assert fstab.read_text() == "# header kept\n" and live_options(point) is None

        first = run_module(tmp_path, opts="size=1m", **args)
        assert (first["changed"], first["fstab_changed"], first["mount_action"]) == (True, True, "mounted"), first
        assert fstab.read_text() == f"# header kept\nracfgtest {point} tmpfs size=1m 0 0\n"
        assert "size=1024k" in live_options(point)

        again = run_module(tmp_path, opts="size=1m", **args)
        assert (again["changed"], again["mount_action"]) == (False, "none"), again

        changed = run_module(tmp_path, opts="size=2m", **args)
        assert (changed["changed"], changed["mount_action"]) == (True, "remounted"), changed
        assert "size=2048k" in live_options(point)

        gone = run_module(tmp_path, state="absent", **args)
        assert (gone["changed"], gone["mount_action"]) == (True, "unmounted"), gone
        assert fstab.read_text() == "# header kept\n" and live_options(point) is None
    finally:
        while live_options(point) is not None:
            subprocess.run(["umount", str(point)], check=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_mount_that_fails_fails_the_task_with_mounts_own_words(tmp_path):
    result = run_module(tmp_path, path=str(tmp_path / "p"), src="racfgtest", fstype="nosuchfs",
                        fstab=str(tmp_path / "fstab"))
    assert result.get("failed") is True, result
    assert result["msg"].startswith(f"mounting {tmp_path / 'p'} failed"), result["msg"]
    assert "nosuchfs" in result["msg"] or "unknown filesystem" in result["msg"], result["msg"]
