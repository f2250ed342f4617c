"""The commands a host runs come from the validators' own declarations (each module's ``COMMANDS``),
collected by validators/conftest.py and merged by racfg.validate.probe.collect_commands.

The fixture ``probe-commands_lab-and-pod64.json`` is what ``probe.host_commands`` (the one central
list the declarations replaced) produced for inventory/lab.yaml and bench/pod64.yaml, with and
without ``--deep``, per host: moving the declarations beside the checks must not change one byte
of what runs on a host."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from racfg.hostfacts.chrony import CHRONY_CONF_COMMAND
from racfg.inventory import load_cluster
from racfg.paths import validators_dir
from racfg.render import write_rendered
from racfg.validate.context import ContextPlugin, RenderedSite, ValidateContext
from racfg.validate.probe import collect_commands
from racfg.validate.validate_run import ValidateOptions, run_checks

ROOT = Path(__file__).resolve().parents[2]
BEFORE = json.loads((Path(__file__).parent / "fixtures" / "probe-commands_lab-and-pod64.json").read_text())
# Sections declared since that list, each with the issue that added it: every cluster host reads
# them besides the list's (issue 52: the cause where it is readable, validators/test_system.py).
ADDED = {"chrony_conf": CHRONY_CONF_COMMAND, "lldpd_conf": "cat /etc/lldpd.conf /etc/lldpd.d/*.conf 2>/dev/null; true"}


def declared(site: RenderedSite) -> ValidateContext:
    """A context whose ``commands`` the validators' collection filled in (no check selected, no host read)."""
    ctx = ValidateContext(site, inventory_display="site.yaml")
    ctx._switch_facts = {}
    assert run_checks(ctx, ValidateOptions(checks=["-none-"])) == []
    assert ctx.commands is not None
    return ctx


@pytest.mark.parametrize("key", sorted(BEFORE))
def test_collected_commands_equal_the_former_central_list(key, tmp_path):
    inventory, _, deep = key.partition(" ")
    write_rendered(load_cluster(ROOT / inventory), tmp_path)
    site = RenderedSite.load(tmp_path)
    if deep:
        site.group_vars["racfg_validate_deep"] = True
    ctx = declared(site)
    now = {n: ctx.commands(ctx.host_vars(n), site.group_vars, sorted(ctx.sysctl_expected(n))) for n in ctx.host_names}
    assert sorted(now) == sorted(BEFORE[key])
    for name, commands in BEFORE[key].items():
        assert now[name] == {**commands, **ADDED}, name


def test_a_module_without_commands_is_refused_at_collection(tmp_path, capsys):
    """A validators module without ``COMMANDS`` is a usage error, not a host that silently runs too little."""
    write_rendered(load_cluster(ROOT / "inventory" / "lab.yaml"), tmp_path / "rendered")
    shutil.copytree(validators_dir(), tmp_path / "validators", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "validators" / "test_new.py").write_text("def test_x(node, probe):\n    assert probe\n")
    code = pytest.main([str(tmp_path / "validators"), "-c", str(tmp_path / "validators" / "pytest.ini"),
                        "--rootdir", str(tmp_path / "validators"), "--rendered", str(tmp_path / "rendered"),
                        "-p", "no:cacheprovider", "--collect-only", "-q"])
    assert code == pytest.ExitCode.USAGE_ERROR
    assert "test_new.py: declares no COMMANDS" in capsys.readouterr().err


def test_consistency_run_alone_reads_what_it_compares(tmp_path):
    """``pytest validators/test_consistency.py`` by hand: its own declaration names the sections of its
    peers' modules it compares (kernel, OFED, ip, ethtool -i, drives, nvidia-smi), as they run them."""
    write_rendered(load_cluster(ROOT / "bench" / "pod64.yaml"), tmp_path)
    site = RenderedSite.load(tmp_path)
    ctx = ValidateContext(site, inventory_display="site.yaml")
    vdir = validators_dir()
    code = pytest.main([str(vdir / "test_consistency.py"), "-c", str(vdir / "pytest.ini"), "--rootdir", str(vdir),
                        "-p", "no:cacheprovider", "--collect-only", "-q"], plugins=[ContextPlugin(ctx)])
    assert code == pytest.ExitCode.OK and ctx.commands is not None
    read = set()
    for name in ctx.host_names:
        alone = ctx.commands(ctx.host_vars(name), site.group_vars, [])
        assert alone.items() <= BEFORE["bench/pod64.yaml"][name].items(), name
        read |= {key.split(":")[0] for key in alone}
    assert read == {"kernel", "ofed_info", "ip_addr", "ethtool_i", "drive", "nvidia_smi"}


def test_two_modules_may_share_a_section_only_with_the_same_command():
    same = [("test_array", {"mounts": "cat /proc/mounts"}),
            ("test_weka", lambda hv, gv, keys: {"mounts": "cat /proc/mounts"})]
    assert collect_commands(same, {}, {}, []) == {"mounts": "cat /proc/mounts"}
    clash = [("test_array", {"mounts": "cat /proc/mounts"}), ("test_weka", {"mounts": "mount"})]
    with pytest.raises(ValueError, match="section mounts: test_array runs 'cat /proc/mounts', test_weka runs 'mount'"):
        collect_commands(clash, {}, {}, [])


def test_declarations_follow_the_host_vars():
    """The commands that depend on the inventory (NIC names, drive paths, sysctl keys) are computed per host."""
    hv = {"racfg_role": "storage", "racfg_nics": [{"name": "data0"}], "racfg_drives": [{"path": "/dev/nvme0n1"}]}
    site = RenderedSite(group_vars={"racfg_fabric": {"type": "infiniband"}}, hosts={"s1": hv}, switches={})
    ctx = declared(site)
    commands = ctx.commands(hv, site.group_vars, ["net.core.rmem_max"])
    assert commands["ethtool:data0"] == "ethtool data0"
    assert commands["ipoib_mode:data0"] == "cat /sys/class/net/data0/mode"
    assert commands["drive:/dev/nvme0n1"].startswith(f"test -b {shlex.quote('/dev/nvme0n1')} && lsblk")
    assert "net.core.rmem_max" in commands["sysctl_live"]
    assert "nvidia_smi" not in commands  # GPU sections are a dgx's
