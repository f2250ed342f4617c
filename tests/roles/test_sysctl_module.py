"""roles/common/module_utils/racfg_sysctl_plan.py (racfg_sysctl's plan, and racfg_probe's comparison
of the same parameters): which keys it applies, leaves, or skips and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.roles.role_modules import load_module_utils

ROOT = Path(__file__).resolve().parents[2]
racfg_sysctl = load_module_utils("racfg_sysctl_plan")


@pytest.fixture
def proc(tmp_path):
    def put(key, value, writable=True):
        path = tmp_path.joinpath(*key.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
        os.chmod(path, 0o644 if writable else 0o444)
    put("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    put("net.core.somaxconn", "4096")
    put("net.core.rmem_max", "212992", writable=False)
    return tmp_path


def test_plan_applies_differences_skips_absent_and_read_only(proc):
    # root ignores file modes, so read-only-ness (an ro /proc/sys mount) is judged by the mode bits here
    def writable(path):
        return bool(os.stat(path).st_mode & 0o200)

    to_apply, unchanged, skipped = racfg_sysctl.plan(
        {"net.ipv4.tcp_rmem": "4096 87380 134217728", "net.core.somaxconn": 4096,
         "net.core.rmem_max": 268435456, "kernel.numa_balancing": 0}, str(proc), writable)
    assert to_apply == {"net.ipv4.tcp_rmem": ("4096 131072 6291456", "4096 87380 134217728")}
    assert unchanged == ["net.core.somaxconn"]
    assert "read-only" in skipped["net.core.rmem_max"]
    assert "not present" in skipped["kernel.numa_balancing"]


def test_plan_as_root_still_reports_absent_keys(proc):
    to_apply, unchanged, skipped = racfg_sysctl.plan({"kernel.numa_balancing": 0, "net.core.somaxconn": "4096"},
                                                     str(proc))
    assert to_apply == {} and unchanged == ["net.core.somaxconn"]
    assert list(skipped) == ["kernel.numa_balancing"]


def test_values_compare_by_fields_and_file_is_sorted_and_stable():
    assert racfg_sysctl.normalise("4096\t87380  6291456\n") == "4096 87380 6291456"
    assert racfg_sysctl.normalise(True) == "1"
    text = racfg_sysctl.render_file({"b.x": 2, "a.y": "1  2"}, "head\nline")
    assert text == "# head\n# line\na.y = 1 2\nb.x = 2\n"
    assert text == racfg_sysctl.render_file({"a.y": "1 2", "b.x": "2"}, "head\nline")


def test_the_probe_compares_as_the_module_would_apply(proc, tmp_path):
    """racfg_probe's sysctl comparison (the common role skips racfg_sysctl where it finds nothing):
    a running value that can be set differs, a read-only one is not applied (never "differs", or a
    container would run the task on every deploy), and the persisted file must match."""
    settings = {"net.core.somaxconn": "4096", "net.core.rmem_max": "268435456", "kernel.numa_balancing": 0}
    conf = tmp_path / "90-racfg.conf"
    conf.write_text(racfg_sysctl.render_file(settings, "head"))
    def writable(path):  # root ignores file modes: an ro /proc/sys mount is judged by the mode bits here
        return bool(os.stat(path).st_mode & 0o200)

    found = racfg_sysctl.compare(settings, str(conf), "head", str(proc), writable)
    assert found["differs"] == []
    assert set(found["not_applied"]) == {"kernel.numa_balancing", "net.core.rmem_max"}
    found = racfg_sysctl.compare({**settings, "net.core.somaxconn": "8192"}, str(conf), "head", str(proc), writable)
    assert f"file {conf} content" in found["differs"]
    assert "kernel parameter net.core.somaxconn is 4096 (wanted 8192)" in found["differs"]


# --- keys and values the modules refuse, whatever the variables (the schema bypassed) ---------------

@pytest.mark.parametrize("key", ["x./etc/motd", "net..core", "net.core.", ".net.core", "kernel", "../../etc/motd",
                                 "net.core/../../../etc", "net.core.rmem max", "net.core.rmem\nmax"])
def test_a_key_that_is_not_a_dotted_name_is_refused(proc, key):
    with pytest.raises(ValueError, match="not a sysctl key"):
        racfg_sysctl.key_path(str(proc), key)
    [problem] = racfg_sysctl.refused({key: "1"}, str(proc))
    assert repr(key) in problem


def test_a_key_whose_file_resolves_outside_proc_sys_is_refused(proc, tmp_path_factory):
    """A symlink under the sysctl tree (a bind mount, a planted link) leads the key elsewhere: refused."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "motd").write_text("site message\n")
    (proc / "net" / "evil").symlink_to(outside)
    with pytest.raises(ValueError, match="outside"):
        racfg_sysctl.key_path(str(proc), "net.evil.motd")
    assert racfg_sysctl.key_path(str(proc), "net.core.somaxconn") == str(proc / "net" / "core" / "somaxconn")
    found = racfg_sysctl.compare({"net.evil.motd": "owned"}, str(proc / "90.conf"), "head", str(proc))
    assert found["differs"] and "outside" in found["differs"][0]
    assert (outside / "motd").read_text() == "site message\n"


@pytest.mark.parametrize("value", ["1\nkernel.core_pattern = |/tmp/x", "1\r", "a\x00b", True, 1.5, None])
def test_a_value_that_is_not_one_line_or_an_integer_is_refused(proc, value):
    [problem] = racfg_sysctl.refused({"net.core.somaxconn": value}, str(proc))
    assert "net.core.somaxconn" in problem


def test_the_module_refuses_before_writing_anything(tmp_path, proc):
    """racfg_sysctl run by Ansible itself with a key that resolves to /etc/motd and a value with a
    newline: the task fails naming both, and neither the sysctl.d file nor any /proc/sys file is written."""
    conf = tmp_path / "sysctl.d" / "90-racfg.conf"
    before = (proc / "net" / "core" / "somaxconn").read_text()
    args = {"settings": {"x./etc/motd": "owned", "net.core.somaxconn": "1\nkernel.core_pattern = |/tmp/x"},
            "file": str(conf), "proc_root": str(proc)}
    bin_dir = Path(sys.executable).parent
    run = subprocess.run([str(bin_dir / "ansible"), "localhost", "-i", "localhost,", "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", "-m", "racfg_sysctl",
                          "-a", json.dumps(args)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1",
                              "ANSIBLE_LIBRARY": str(ROOT / "roles" / "common" / "library"),
                              "ANSIBLE_MODULE_UTILS": str(ROOT / "roles" / "common" / "module_utils")})
    assert run.returncode != 0, run.stdout
    assert "kernel parameters refused" in run.stdout and "x./etc/motd" in run.stdout
    assert "net.core.somaxconn: value" in run.stdout
    assert not conf.exists()
    assert (proc / "net" / "core" / "somaxconn").read_text() == before
