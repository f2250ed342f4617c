"""roles/common/library/racfg_probe.py: what it calls different, and that it errs towards "differs".

The roles skip their tasks when the probe finds nothing different, so a check that wrongly says
"same" would hide a change from deploy and drift: each row is one way a host can differ.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

from tests.roles.role_modules import load_module_utils, load_role_module

ROOT = Path(__file__).resolve().parents[2]
racfg_probe = load_role_module("common", "racfg_probe")
racfg_state = load_module_utils("racfg_state")


@pytest.fixture
def host(tmp_path: Path) -> Path:
    (tmp_path / "etc").mkdir()
    conf = tmp_path / "etc" / "app.conf"
    conf.write_text("a = 1\n")
    conf.chmod(0o644)
    (tmp_path / "etc" / "hosts").write_text("127.0.0.1 localhost\n# BEGIN m\n10.0.0.1 a\n# END m\n")
    (tmp_path / "sched").write_text("[none] mq-deadline kyber\n")
    return tmp_path


def _file(host: Path, **over: object) -> dict:
    return {"path": str(host / "etc" / "app.conf"), "content": "a = 1\n", "mode": "0644",
            "owner": None, "group": None, **over}


@pytest.mark.parametrize(("label", "change", "spec", "expected"), [
    ("same content and mode", None, {}, []),
    ("content differs", lambda h: (h / "etc/app.conf").write_text("a = 2\n"), {}, ["content"]),
    ("trailing newline differs", lambda h: (h / "etc/app.conf").write_text("a = 1"), {}, ["content"]),
    ("mode differs", lambda h: (h / "etc/app.conf").chmod(0o600), {}, ["mode 0o600 (wanted 0644)"]),
    ("missing", lambda h: (h / "etc/app.conf").unlink(), {}, ["missing"]),
    ("owner differs", None, {"owner": "nobody-racfg-test"}, ["owner"]),
])
def test_file_differs(host: Path, label: str, change, spec: dict, expected: list[str]) -> None:
    if change is not None:
        change(host)
    found = racfg_probe.file_differs(_file(host, **spec))
    assert len(found) == len(expected), (label, found)
    for line, part in zip(found, expected, strict=True):
        assert part in line, (label, line)


def test_managed_block_and_absent_lines(host: Path) -> None:
    hosts = str(host / "etc" / "hosts")
    assert racfg_probe.contains_differs({"path": hosts, "lines": ["# BEGIN m", "10.0.0.1 a", "# END m"]}) == []
    assert racfg_probe.contains_differs({"path": hosts, "lines": ["# BEGIN m", "10.0.0.2 a", "# END m"]})
    assert racfg_probe.contains_differs({"path": str(host / "nope"), "lines": ["x"]})
    # the block's file mode too (blockinfile sets it): a chmod'ed /etc/hosts is not converged
    block = {"path": hosts, "lines": ["# BEGIN m", "10.0.0.1 a", "# END m"], "mode": "0644"}
    os.chmod(hosts, 0o644)
    assert racfg_probe.contains_differs(block) == []
    os.chmod(hosts, 0o600)
    assert racfg_probe.contains_differs(block) == [f"file {hosts} mode 0o600 (wanted 0644)"]
    assert racfg_probe.absent_line_differs({"path": hosts, "regexp": r"^127\.0\.1\.1\s"}) == []
    assert racfg_probe.absent_line_differs({"path": hosts, "regexp": r"^127\.0\.0\.1\s"})


def test_values_by_value_and_by_regexp(host: Path) -> None:
    glob = str(host / "sched")
    assert racfg_probe.values_differ({"glob": glob, "regexp": r"\[none\]"}) == []
    assert racfg_probe.values_differ({"glob": glob, "regexp": r"\[mq-deadline\]"})
    assert racfg_probe.values_differ({"glob": glob, "value": "none"})  # the whole line is compared
    assert racfg_probe.values_differ({"glob": str(host / "no-such-*"), "value": "x"}) == []  # nothing matched


def test_directories_commands_and_only_if(host: Path) -> None:
    mode = oct(os.stat(host / "etc").st_mode & 0o7777)[2:]
    assert racfg_probe.directory_differs({"path": str(host / "etc"), "mode": mode}) == []
    assert racfg_probe.directory_differs({"path": str(host / "etc"), "mode": "0700" if mode != "700" else "0755"})
    assert racfg_probe.directory_differs({"path": str(host / "nope")}) == [f"directory {host / 'nope'} missing"]
    assert racfg_probe.command_differs({"argv": [sys.executable, "-c", "pass"], "why": "ok"}) == []
    assert racfg_probe.command_differs({"argv": [sys.executable, "-c", "raise SystemExit(3)"],
                                        "why": "clock not synchronised"}) == ["clock not synchronised (exit 3)"]
    assert racfg_probe.command_differs({"argv": ["/no/such/tool"], "why": "absent tool"})  # cannot run: differs
    assert racfg_probe.applies({}) is True
    assert racfg_probe.applies({"only_if": {"exists": str(host / "nope")}}) is False
    assert racfg_probe.applies({"only_if": {"exists": str(host / "etc")}}) is True
    has_bit = racfg_state.bounding_capabilities() >> 25 & 1
    assert racfg_probe.applies({"only_if": {"lacks_capability": 25}}) is (not has_bit)


def test_outputs_are_returned_by_name_and_a_failing_command_fails_the_probe() -> None:
    """fabric's guard decides on ``ip -j addr show`` read through the probe: its output comes back
    as is, and a command that fails is an error (never an empty, "nothing there" output), unless it
    may fail (ofed's ibv_devices before the stack is installed): then its status and stderr come back."""
    outputs, errors, error = racfg_probe.command_outputs([{"name": "echo", "argv": ["printf", "%s\\n", "a", "b"]}])
    assert (outputs, errors, error) == ({"echo": "a\nb\n"}, {}, None)
    outputs, _errors, error = racfg_probe.command_outputs([{"name": "no", "argv": ["sh", "-c", "echo gone; exit 3"]}])
    assert outputs == {} and error == "sh -c echo gone; exit 3 failed (exit 3): gone"
    _outputs, _errors, error = racfg_probe.command_outputs([{"name": "x", "argv": ["/nonexistent/racfg-tool"]}])
    assert error is not None and error.startswith("/nonexistent/racfg-tool failed (exit 127)")
    outputs, errors, error = racfg_probe.command_outputs(
        [{"name": "ibv", "argv": ["sh", "-c", "echo half; echo no device >&2; exit 1"], "may_fail": True},
         {"name": "gone", "argv": ["/nonexistent/racfg-tool"], "may_fail": True}])
    assert error is None and outputs == {"ibv": "half\n", "gone": ""}
    assert errors["ibv"] == {"rc": 1, "stderr": "no device\n"} and errors["gone"]["rc"] == 127


def test_other_roles_checks_are_compared_apart_and_only_where_they_apply(host: Path) -> None:
    """The common role's probe compares what the fabric role manages too (``also``): each role's
    differences come back apart, so only the role that differs runs; a check for one network
    configuration system is made only where that system is (only_if exists / absent)."""
    conf = str(host / "etc" / "app.conf")
    netplan = str(host / "usr-sbin-netplan")
    own, _ = racfg_probe.compare({"files": [_file(host)]})
    fabric, checked = racfg_probe.compare({"files": [
        _file(host, content="a = 2\n", only_if={"absent": netplan}),
        _file(host, content="other\n", only_if={"exists": netplan})]})
    assert own == [] and fabric == [f"file {conf} content"] and checked == 2
    Path(netplan).write_text("")
    fabric, _ = racfg_probe.compare({"files": [_file(host, content="a = 2\n", only_if={"absent": netplan})]})
    assert fabric == []


def test_pci_devices_are_read_as_sysfs_writes_them(tmp_path: Path) -> None:
    """The GPU role counts NVIDIA GPUs (vendor 0x10de, class 0x0300/0x0302) from this read."""
    for name, vendor, klass in (("0000:07:00.0", "0x10de", "0x030200"), ("0000:00:1f.0", "0x8086", "0x060100")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "vendor").write_text(vendor + "\n")
        (tmp_path / name / "class").write_text(klass + "\n")
    assert racfg_probe.pci_devices(str(tmp_path)) == [{"vendor": "0x8086", "class": "0x060100"},
                                                      {"vendor": "0x10de", "class": "0x030200"}]


RECORDED = ROOT / "tests/hostfacts/fixtures"  # real host-tool output (see its conftest.py)


def _fake_tool(bin_dir: Path, name: str, recorded: Path) -> None:
    """A tool on PATH that prints a real host's recorded output."""
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\ncat '{recorded}'\n")
    tool.chmod(0o755)


def test_host_facts_read_the_baseline_document_with_the_hosts_own_tools(tmp_path: Path, monkeypatch) -> None:
    """The baseline document (host_facts): identity as given, the installed packages, OFED and a data
    NIC's driver and firmware from real ofed_info/ethtool output, its admin state, routes and static
    neighbour entries (the data plane drift compares), no GPU where nvidia-smi is missing,
    an undeclared NIC as null and a declared drive that does not exist left out."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ofed = RECORDED / "ofed_info-s_MLNX_OFED_LINUX-5.5-1.0.3.2_openucx-ucx-issue-8772.txt"
    ethtool = RECORDED / "ethtool-i_mlx5_core_ConnectX-4-Lx_fw14.23.1020_inbox-driver_isc-projects-ethq-issue-8.txt"
    _fake_tool(bin_dir, "ofed_info", ofed)
    _fake_tool(bin_dir, "ethtool", ethtool)
    system = [d for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin") if Path(d).is_dir()]
    # nvidia-smi is on no directory of this PATH (no GPU here): the document says so with null
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), *system]))
    doc = racfg_probe.host_facts({"nics": ["lo", "nope0"], "drives": [str(tmp_path / "no-such-drive")],
                                  "identity": {"host": "dgx01", "kernel": "6.1.0"}})
    assert doc["host"] == "dgx01" and doc["kernel"] == "6.1.0"
    assert doc["ofed"] == "MLNX_OFED_LINUX-5.5-1.0.3.2"
    # lo's routes are in the local table, not main; no static neighbour entry is in 127.0.0.0/8
    assert doc["nics"]["lo"] == {"mtu": 65536, "addresses": ["127.0.0.1/8"], "driver": "mlx5_core",
                                 "firmware": "14.23.1020", "admin": "up", "routes": [], "neighbours": []}
    assert doc["nics"]["nope0"] is None
    assert all(d.get("path") != str(tmp_path / "no-such-drive") for d in doc["drives"])
    assert doc["gpu"] is None
    assert "bash" in doc["packages"] and doc["packages"]["bash"]



def test_host_facts_take_the_links_from_the_probes_own_ip_read_when_it_made_one() -> None:
    """The common role's probe reads ``ip -j addr show`` for the fabric role: the baseline document is
    built from that output, not from a second run of ip (data0 exists only in the given output)."""
    given = json.dumps([{"ifname": "data0", "mtu": 9000,
                         "addr_info": [{"family": "inet", "local": "198.19.0.11", "prefixlen": 24}]}])
    doc = racfg_probe.host_facts({"nics": ["data0", "lo"], "identity": {"host": "dgx01"}},
                                 read={" ".join(load_module_utils("racfg_host_facts").IP_ADDR): given})
    assert doc["nics"]["data0"]["mtu"] == 9000 and doc["nics"]["data0"]["addresses"] == ["198.19.0.11/24"]
    assert doc["nics"]["lo"] is None  # not in the given read


@pytest.mark.parametrize(("label", "change", "spec", "expected"), [
    ("same content: no diff", None, {}, None),
    ("content differs: the host's beside the rendered", lambda h: (h / "etc/app.conf").write_text("a = 2\n"), {},
     ("a = 2\n", "a = 1\n")),
    ("missing: an empty before", lambda h: (h / "etc/app.conf").unlink(), {}, ("", "a = 1\n")),
    ("mode only: the content is the same, no diff", lambda h: (h / "etc/app.conf").chmod(0o600), {}, None),
    ("a check that does not apply here: no diff", lambda h: (h / "etc/app.conf").write_text("x\n"),
     {"only_if": {"exists": "/nonexistent/racfg"}}, None),
    ("too large to show: sizes", lambda h: (h / "etc/app.conf").write_text("x" * 300_000), {},
     ("(300000 bytes)\n", "(6 bytes)\n")),
])
def test_content_diffs_show_what_a_deploy_would_write(host: Path, label: str, change, spec: dict,
                                                      expected: tuple[str, str] | None) -> None:
    """racfg drift's config layer shows these as each drifted file's diff."""
    if change is not None:
        change(host)
    found = racfg_probe.content_diffs([_file(host, **spec)])
    if expected is None:
        assert found == [], label
        return
    path = str(host / "etc" / "app.conf")
    assert found == [{"before": expected[0], "after": expected[1], "before_header": f"{path} (on the host)",
                      "after_header": f"{path} (rendered)"}], label


def test_wanted_files_are_the_roles_own_the_other_roles_and_the_kernel_parameters(host: Path) -> None:
    params = {"files": [_file(host)], "also": {"fabric": {"files": [{"path": "/x.network", "content": "n\n"}]},
                                               "ofed": None},
              "sysctl": {"settings": {"net.core.rmem_max": 268435456, "vm.swappiness": 1}, "file": "/s.conf",
                         "header": "racfg"}}
    files = racfg_probe.wanted_files(params)
    assert [f["path"] for f in files] == [str(host / "etc" / "app.conf"), "/x.network", "/s.conf"]
    assert files[2]["content"] == "# racfg\nnet.core.rmem_max = 268435456\nvm.swappiness = 1\n"
    assert racfg_probe.wanted_files({"files": [], "also": {}, "sysctl": {}}) == []


class _CollectorHost:
    """What setup's collectors ask of their module, answered on this machine."""

    def get_bin_path(self, name: str, *args: object, **kwargs: object) -> str | None:
        import shutil

        return shutil.which(name)

    def run_command(self, args: object, *rest: object, **kwargs: object) -> tuple[int, str, str]:
        import subprocess

        proc = subprocess.run(args, shell=isinstance(args, str), capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr


def test_the_facts_are_what_setups_collectors_read() -> None:
    """The probe reads hostname, kernel and distribution without setup's collectors (their package
    imports every collector): on this machine (the lab's OS family) the values are theirs, so a
    baseline recorded by either compares equal."""
    from ansible.module_utils.facts.system.distribution import DistributionFactCollector
    from ansible.module_utils.facts.system.platform import PlatformFactCollector

    host = _CollectorHost()
    found = {**PlatformFactCollector().collect(module=host), **DistributionFactCollector().collect(module=host)}
    mine = racfg_probe.system_facts()
    assert mine == {name: found.get(name) for name in mine}
    assert set(mine) == {"hostname", "kernel", "distribution", "distribution_version", "distribution_release"}


def _module_result(module, args: dict, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> dict:
    """What ``module``'s main() prints for ``args``, as Ansible would run it.

    ansible-core 2.19 and later have ``ansible.module_utils.testing.patch_module_args``; 2.16-2.18 have
    no such helper, and their guide to unit-testing modules sets ``basic._ANSIBLE_ARGS`` (its
    ``set_module_args``), as this does there."""
    try:
        from ansible.module_utils.testing import patch_module_args
    except ImportError:  # ansible-core 2.16-2.18
        from ansible.module_utils import basic

        monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode())
        patch_module_args = contextlib.nullcontext
    with patch_module_args(args), pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)


def test_the_probe_reads_the_drives_as_the_drives_probe_does(tmp_path: Path, capsys, monkeypatch) -> None:
    """playbooks/read.yml gives a storage server's drives read to the common role's probe (its drives
    option): one module run, and the same answer as racfg_drive_probe's (a drive gone, the udev rule
    missing, the record's diff), with the probe's own diff beside it."""
    drive_probe = load_role_module("nvme_storage", "racfg_drive_probe")
    mine = tmp_path / "app.conf"
    mine.write_text("old\n")
    drives = {"drives": [{"path": str(tmp_path / "nvme9n1"), "model": "X"}], "host_name": "stor01",
              "weka_cli": "weka-not-installed-here",
              "state": {"scheduler": "none", "record": {"path": str(tmp_path / "drives.json")},
                        "files": [{"path": str(tmp_path / "60-sched.rules"), "content": "ACTION==add\n"}],
                        "diffs": True}}
    own = {"files": [{"path": str(mine), "content": "new\n"}], "diffs": True}
    alone = _module_result(drive_probe, drives, capsys, monkeypatch)
    without = _module_result(racfg_probe, own, capsys, monkeypatch)
    probed = _module_result(racfg_probe, {**own, "drives": drives}, capsys, monkeypatch)
    assert "drives" not in without  # not asked: not read
    assert probed["drives"] == {k: v for k, v in alone.items() if k not in ("diff", "changed", "invocation")}
    assert probed["drives"]["drives"][0]["present"] is False and probed["drives"]["weka_installed"] is False
    assert f"file {tmp_path}/60-sched.rules missing" in probed["drives"]["state"]["differs"]
    headers = [d["after_header"] for d in probed["diff"]]
    assert headers == [d["after_header"] for d in without["diff"] + alone["diff"]] and len(headers) == 3
