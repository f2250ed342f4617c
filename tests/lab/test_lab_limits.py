"""The limits check of ``lab up`` (lab/racfg_lab/limits.py) on a stand-in /proc/sys: never the machine's.

The machine's own limits are shared by every lab on it, so lowering them to provoke a refusal
would break other people's labs: these tests point the check at a directory holding the same
files with the values of a stock machine.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
from pathlib import Path

import pytest

from racfg.errors import CannotRunError
from racfg_lab import limits
from racfg_lab.bootlog import boot_failure_cause
from racfg_lab.state import no_lab_running

STOCK = {  # a fresh Debian/Ubuntu machine
    "fs.inotify.max_user_instances": 128,
    "fs.inotify.max_user_watches": 65536,
    "kernel.pid_max": 32768,
    "kernel.threads-max": 192730,
    "fs.file-max": 2466170,
    "net.ipv4.neigh.default.gc_thresh3": 1024,
}
IDLE_MACHINE = limits.Usage(inotify_instances=40, inotify_watches=300, tasks=250, open_files=2000,
                            mem_available_mib=20000)
ENOUGH_FILES = (65536, 65536)


def stand_in(tmp_path: Path, **overrides: int) -> limits.Sysctls:
    root = tmp_path / "sys"
    for name, value in {**STOCK, **{k.replace("__", "."): v for k, v in overrides.items()}}.items():
        path = root / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{value}\n")
    return limits.Sysctls(root)


def test_a_small_lab_needs_nothing_raised(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    said: list[str] = []
    assert limits.ensure(4, 1, tmp_path / "lab", said.append, sysctls=sysctls, usage=IDLE_MACHINE,
                         nofile=ENOUGH_FILES, allow_raise=True) == []
    assert said == []
    assert sysctls.read("fs.inotify.max_user_instances") == 128
    assert not (tmp_path / "lab" / limits.RECORD_NAME).exists()


def test_a_pod_on_a_stock_inotify_limit_is_refused_with_the_exact_command(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    with pytest.raises(CannotRunError) as caught:
        limits.ensure(64, 1, tmp_path / "lab", lambda _: None, sysctls=sysctls, usage=IDLE_MACHINE,
                      nofile=ENOUGH_FILES, allow_raise=False)
    error = caught.value
    # 40 in use + 64 hosts x 8 + 16 of headroom
    assert "fs.inotify.max_user_instances is 128, a lab this size needs at least 568" in error.message
    assert f"{limits.RAISE_ENV}=0 forbids racfg to raise it" in error.message
    assert error.hint is not None and "sysctl -w fs.inotify.max_user_instances=1024" in error.hint
    assert error.exit_code == 3
    assert sysctls.read("fs.inotify.max_user_instances") == 128  # untouched
    assert not (tmp_path / "lab" / limits.RECORD_NAME).exists()


def test_the_environment_forbids_raising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.RAISE_ENV, "0")
    sysctls = stand_in(tmp_path, fs__inotify__max_user_instances=100)
    with pytest.raises(CannotRunError, match=r"max_user_instances is 100"):
        limits.ensure(64, 1, tmp_path / "lab", lambda _: None, sysctls=sysctls, usage=IDLE_MACHINE,
                      nofile=ENOUGH_FILES)
    assert sysctls.read("fs.inotify.max_user_instances") == 100


def test_raised_with_a_note_recorded_and_restored_when_the_last_lab_is_down(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    record_dir = tmp_path / "lab"
    said: list[str] = []
    limits.ensure(64, 1, record_dir, said.append, sysctls=sysctls, usage=IDLE_MACHINE, nofile=ENOUGH_FILES,
                  allow_raise=True)
    assert sysctls.read("fs.inotify.max_user_instances") == 1024
    assert sysctls.read(limits.NEIGHBOUR_LIMIT) == 16384
    assert len(said) == 2 and said[0].startswith("raised fs.inotify.max_user_instances from 128 to 1024")
    assert said[1].startswith(f"raised {limits.NEIGHBOUR_LIMIT} from 1024 to 16384")
    record = json.loads((record_dir / limits.RECORD_NAME).read_text())
    assert record == {"fs.inotify.max_user_instances": {"original": 128, "set": 1024},
                      limits.NEIGHBOUR_LIMIT: {"original": 1024, "set": 16384}}

    # a second, bigger lab raises again; the original stays the machine's own value
    limits.ensure(200, 1, record_dir, said.append, sysctls=sysctls, usage=IDLE_MACHINE, nofile=ENOUGH_FILES,
                  allow_raise=True)
    assert sysctls.read("fs.inotify.max_user_instances") == 2048
    assert json.loads((record_dir / limits.RECORD_NAME).read_text())["fs.inotify.max_user_instances"] == {
        "original": 128, "set": 2048}

    assert limits.restore(record_dir, lambda: False, sysctls=sysctls) == []  # a lab is still up
    assert sysctls.read("fs.inotify.max_user_instances") == 2048
    assert limits.restore(record_dir, lambda: True, sysctls=sysctls) == [
        "restored fs.inotify.max_user_instances to 128", f"restored {limits.NEIGHBOUR_LIMIT} to 1024"]
    assert sysctls.read("fs.inotify.max_user_instances") == 128
    assert sysctls.read(limits.NEIGHBOUR_LIMIT) == 1024
    assert not (record_dir / limits.RECORD_NAME).exists()


def test_a_value_changed_by_someone_else_is_not_restored(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    record_dir = tmp_path / "lab"
    limits.ensure(64, 1, record_dir, lambda _: None, sysctls=sysctls, usage=IDLE_MACHINE, nofile=ENOUGH_FILES,
                  allow_raise=True)
    sysctls.write("fs.inotify.max_user_instances", 8192)  # an operator's own setting since
    assert limits.restore(record_dir, lambda: True, sysctls=sysctls) == [f"restored {limits.NEIGHBOUR_LIMIT} to 1024"]
    assert sysctls.read("fs.inotify.max_user_instances") == 8192
    assert not (record_dir / limits.RECORD_NAME).exists()


def test_a_sysctl_that_cannot_be_written_is_refused_with_the_command(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    target = sysctls.path("fs.inotify.max_user_instances")
    target.unlink()
    target.mkdir()  # writing it fails for real (IsADirectoryError), as on a read-only /proc/sys
    sysctls_ro = _ReadOnlyValue(sysctls.root, "fs.inotify.max_user_instances", 128)
    with pytest.raises(CannotRunError) as caught:
        limits.ensure(64, 1, tmp_path / "lab", lambda _: None, sysctls=sysctls_ro, usage=IDLE_MACHINE,
                      nofile=ENOUGH_FILES, allow_raise=True)
    assert "racfg could not raise it" in caught.value.message
    assert caught.value.hint is not None and "sysctl -w fs.inotify.max_user_instances=1024" in caught.value.hint


class _ReadOnlyValue(limits.Sysctls):
    """A stand-in /proc/sys where one entry is a directory: reading gives ``value``, writing fails
    with the OSError the real file system raises (IsADirectoryError), as a read-only /proc/sys would."""

    def __init__(self, root: Path, name: str, value: int) -> None:
        super().__init__(root)
        self.name, self.value = name, value

    def read(self, name: str) -> int:
        return self.value if name == self.name else super().read(name)


def test_memory_is_never_raised_only_refused(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    small = limits.Usage(inotify_instances=0, inotify_watches=0, tasks=100, open_files=100, mem_available_mib=1000)
    with pytest.raises(CannotRunError) as caught:
        limits.ensure(64, 1, tmp_path / "lab", lambda _: None, sysctls=sysctls, usage=small, nofile=ENOUGH_FILES,
                      allow_raise=True)
    assert "memory is 1000, a lab this size needs at least 2096" in caught.value.message
    assert caught.value.hint is not None and "fewer hosts" in caught.value.hint


def test_open_files_and_pids_are_counted_per_host(tmp_path: Path) -> None:
    sysctls = stand_in(tmp_path)
    found = {s.name: s for s in limits.shortfalls(1000, 8, IDLE_MACHINE, sysctls, nofile=(1024, 4096))}
    assert found["RLIMIT_NOFILE"].need == 1024 + 1000 * limits.CONTROLLER_FILES_PER_HOST
    assert found["RLIMIT_NOFILE"].fix == f"ulimit -n {1024 + 1000 * limits.CONTROLLER_FILES_PER_HOST}"
    assert found["kernel.pid_max"].need == 250 + 1000 * limits.HOST_COST.tasks + 8 * limits.SWITCH_COST.tasks + 512
    assert found["kernel.pid_max"].raise_to == 65536


@pytest.mark.parametrize(("hosts", "switches", "in_use", "raise_to"), [
    (4, 1, 0, None),  # lab.yaml: 108 entries at most, the stock 1024 holds them
    (17, 2, 0, 2048),  # ra-ethernet: 3 * 20 * 20 = 1200
    (17, 2, 900, 4096),  # entries another lab holds count too
    (64, 1, 0, 16384),  # pod64: 3 * 66 * 66 = 13068
])
def test_the_shared_arp_table_is_sized_for_every_pair_of_nodes(tmp_path: Path, hosts: int, switches: int,
                                                                in_use: int, raise_to: int | None) -> None:
    usage = dataclasses.replace(IDLE_MACHINE, neighbours=in_use)
    found = {s.name: s for s in limits.shortfalls(hosts, switches, usage, stand_in(tmp_path), ENOUGH_FILES)}
    short = found.get(limits.NEIGHBOUR_LIMIT)
    assert (short.raise_to if short else None) == raise_to
    if short:
        assert short.need == in_use + limits.NEIGHBOUR_NETWORKS * (hosts + switches + 1) ** 2
        assert short.fix == f"sysctl -w {limits.NEIGHBOUR_LIMIT}={raise_to}"


def test_arp_entries_are_read_from_the_kernels_table_statistics(tmp_path: Path) -> None:
    """/proc/net/stat/arp_cache as this machine prints it: hex columns, one line per CPU, the first
    column the table's entries (all namespaces)."""
    stat = tmp_path / "net" / "stat" / "arp_cache"
    stat.parent.mkdir(parents=True)
    stat.write_text(
        "entries  allocs   destroys hash_grows lookups  hits     res_failed rcv_probes_mcast rcv_probes_ucast "
        "periodic_gc_runs forced_gc_runs unresolved_discards table_fulls\n"
        "000007d3 000067da 00008f85 00000005   000c3185 000276eb 0000009c   00000000         00000000         "
        "00000c5b         00048a6e       00000000            000488e5\n"
        "000007d3 00006c71 000044c6 00000004   000c6f22 00029714 00000098   00000000         00000000         "
        "00000000         0004a7aa       00000000            0004a60e\n")
    assert limits._arp_entries(tmp_path) == 0x7D3
    assert limits._arp_entries(tmp_path / "missing") == 0
    assert limits.measure_usage().neighbours >= 0


def test_usage_counts_this_process_inotify_instance() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    assert fd >= 0
    try:
        usage = limits.measure_usage()
    finally:
        os.close(fd)
    assert usage.tasks >= 1 and usage.mem_available_mib > 0 and usage.open_files > 0
    if os.geteuid() == 0:  # only root's instances count (lab machines run as root)
        assert usage.inotify_instances >= 1


def test_a_held_site_lock_means_a_lab_is_being_built(tmp_path: Path) -> None:
    from racfg.lock.local import site_lock

    with site_lock(tmp_path, "pod64", "lab"):
        assert no_lab_running(tmp_path) is False


# nspawn's log of a machine whose systemd could not get an inotify instance (the last boot of
# two; the first went fine). The last lines are nspawn's epilogue, which names no cause.
BOOT_LOG = """\
systemd 252.30-1~deb12u2 running in system mode (+PAM +AUDIT +SELINUX ...)
Detected virtualization systemd-nspawn.
systemd 252.30-1~deb12u2 running in system mode (+PAM +AUDIT +SELINUX ...)
Detected virtualization systemd-nspawn.
Detected architecture x86-64.
Failed to allocate manager object: Too many open files
[!!!!!!] Failed to allocate manager object.
Exiting PID 1...
Attempted to remove disk file system under "/run/systemd/nspawn/propagate/rf-pod64.gpu27", and we can't allow that.
"""


def test_boot_failure_names_the_cause_not_the_epilogue() -> None:
    cause, fix = boot_failure_cause(BOOT_LOG)
    assert cause == ("Failed to allocate manager object: Too many open files"
                     " | [!!!!!!] Failed to allocate manager object.")
    assert fix is not None and "sysctl -w fs.inotify.max_user_instances=1024" in fix


def test_boot_failure_without_a_known_cause_shows_the_last_lines() -> None:
    cause, fix = boot_failure_cause("Spawning container x\nsomething odd\nExiting PID 1...\n")
    assert cause == "Spawning container x | something odd | Exiting PID 1..."
    assert fix is None
