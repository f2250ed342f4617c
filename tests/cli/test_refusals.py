"""Bad input is refused up front, located: exit 2, the command, the option and the value named,
and nothing run, recorded or connected to before the refusal (no run directory, no deploy)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from racfg.cli import invoke
from racfg.cli import options as opts
from racfg.errors import UsageError
from racfg.inventory import load_cluster
from racfg.paths import roles_dir

REPO = Path(__file__).resolve().parents[2]
LAB = str(REPO / "inventory" / "lab.yaml")


pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture(autouse=True)
def _no_deploy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deploy reaching its run is a refusal that came too late."""
    def run_deploy(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("deploy ran: the refusal must come before it")

    monkeypatch.setattr("racfg.cli.deploy_cmd.run_deploy", run_deploy)


def racfg(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["racfg", *argv])
    code = invoke()
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def assert_refused(code: int, text: str, tmp_path: Path, *named: str) -> None:
    assert code == 2, text
    assert "Traceback" not in text and "internal error" not in text, text
    for part in named:
        assert part in text, text
    assert not (tmp_path / "state" / "runs").exists(), "a run started before the refusal"


# --- output directories ------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["render", LAB, "--out", "/proc/nope"],
    ["validate", LAB, "--output", "/proc/nope"],
    ["drift", LAB, "--output", "/proc/nope"],
    ["smoke", LAB, "--output", "/proc/nope"],
    ["smoke", "--compare", "a", "b", "--output", "/proc/nope"],
])
def test_an_output_directory_that_cannot_be_made_is_refused(monkeypatch, capsys, tmp_path, argv):
    code, text = racfg(monkeypatch, capsys, *argv)
    option = argv[argv.index("/proc/nope") - 1]
    assert_refused(code, text, tmp_path, f"{argv[0]}: {option} /proc/nope: cannot create this directory")


def test_reading_through_slurm_a_site_without_a_scheduler_is_refused(monkeypatch, capsys, tmp_path):
    ethernet = str(REPO / "inventory" / "ra-ethernet.yaml")
    code, text = racfg(monkeypatch, capsys, "validate", ethernet, "--read-via", "slurm")
    assert_refused(code, text, tmp_path, "validate: --read-via slurm: site ra-ethernet declares no scheduler",
                   "declare scheduler:")


def test_an_output_path_that_is_a_file_is_refused(monkeypatch, capsys, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("not a directory\n")
    code, text = racfg(monkeypatch, capsys, "render", LAB, "--out", str(target))
    assert_refused(code, text, tmp_path, f"render: --out {target}: exists and is not a directory")
    assert target.read_text() == "not a directory\n"


def test_writable_dir_makes_the_directory_and_leaves_no_probe(tmp_path):
    out = tmp_path / "a" / "b"
    assert opts.writable_dir("render", "--out", out) == out
    assert out.is_dir() and list(out.iterdir()) == []


# --- tags --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("option", "value", "bad"), [
    ("--tags", "nosuchrole", "nosuchrole"),
    ("--skip-tags", "common,nosuchrole", "nosuchrole"),
])
def test_deploy_refuses_a_tag_that_names_no_role(monkeypatch, capsys, tmp_path, option, value, bad):
    code, text = racfg(monkeypatch, capsys, "deploy", LAB, option, value, "--yes")
    assert_refused(code, text, tmp_path, f"deploy: {option} {bad}: no such role or tag (roles: common, fabric")
    shipped = sorted(p.name for p in roles_dir().iterdir() if p.is_dir())
    assert all(role in text for role in shipped), text


def test_the_tags_are_read_from_the_playbooks_and_roles(tmp_path, monkeypatch):
    playbooks, roles = tmp_path / "playbooks", tmp_path / "roles"
    (roles / "alpha" / "tasks").mkdir(parents=True)
    (roles / "untagged_role" / "tasks").mkdir(parents=True)
    playbooks.mkdir()
    (playbooks / "site.yml").write_text("- hosts: all\n  roles:\n    - {role: alpha, tags: [alpha]}\n"
                                        "    - role: untagged_role\n")
    (roles / "alpha" / "tasks" / "main.yml").write_text(
        "- name: probe\n  ansible.builtin.command: id\n  tags: [always, probe]\n"
        "- name: secret\n  ansible.builtin.debug:\n    msg: !unsafe '{{ x }}'\n  tags: 'audit, probe'\n")
    monkeypatch.setattr(opts, "playbooks_dir", lambda: playbooks)
    monkeypatch.setattr(opts, "roles_dir", lambda: roles)
    opts.playbook_tags.cache_clear()
    try:
        assert opts.playbook_tags() == (("alpha",), ("audit", "probe"))
        opts.tags("deploy", "--tags", "alpha,probe,audit,all,always")
        with pytest.raises(UsageError, match=r"deploy: --tags untagged_role: no such role or tag \(roles: alpha; "
                                             r"other tags: audit, probe\)"):
            opts.tags("deploy", "--tags", "untagged_role")
    finally:
        opts.playbook_tags.cache_clear()


# --- hosts, switches, groups -------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["deploy", LAB, "--limit", "dgx09", "--yes"],
    ["drift", LAB, "--limit", "dgx09"],
    ["validate", LAB, "--limit", "dgx09"],
])
def test_a_limit_that_matches_nothing_is_refused(monkeypatch, capsys, tmp_path, argv):
    code, text = racfg(monkeypatch, capsys, *argv)
    assert_refused(code, text, tmp_path, f"{argv[0]}: --limit dgx09: no host, switch or group of site lab",
                   "groups: all, cluster, dgx, storage, switches")


@pytest.mark.parametrize("pattern", ["dgx01", "dgx0*,storage:!stor02", "~sw.", "dgx[0:1]", "all:&dgx", "switches"])
def test_ansible_patterns_that_match_are_accepted(pattern):
    opts.limit("deploy", "--limit", pattern, load_cluster(LAB))


@pytest.mark.parametrize(("pattern", "bad", "why"), [
    ("dgx01,dgx9*", "dgx9*", "no host, switch or group"),
    ("all:!nosuch", "!nosuch", "no host, switch or group"),
    ("~(", "~(", "not a regular expression"),
    ("@/nonexistent/retry", "@/nonexistent/retry", "no such file"),
])
def test_ansible_patterns_that_match_nothing_are_refused(pattern, bad, why):
    with pytest.raises(UsageError, match=f"deploy: --limit {bad}: {why}".replace("(", r"\(").replace("*", r"\*")):
        opts.limit("deploy", "--limit", pattern, load_cluster(LAB))


def test_smoke_refuses_a_host_that_is_no_dgx(monkeypatch, capsys, tmp_path):
    code, text = racfg(monkeypatch, capsys, "smoke", LAB, "--hosts", "dgx01,stor01")
    assert_refused(code, text, tmp_path, "smoke: --hosts stor01: no such dgx host (dgx hosts: dgx01, dgx02)")


# --- phases, categories, checks, baselines, runs, formats --------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (["smoke", LAB, "--skip", "links,warp"], "smoke: --skip warp: no such phase (phases: links, scaling"),
    (["validate", LAB, "--category", "network", "--category", "nics"],
     "validate: --category nics: no such category (categories: system, network"),
    (["validate", LAB, "--check", "*/nosuchcategory/*"], "validate: --check */nosuchcategory/*: matches no check"),
    (["validate", LAB, "--check", "dgx09/*"], "validate: --check dgx09/*: matches no check of site lab"),
    (["drift", LAB, "--baseline", "20200101-000000"],
     "drift: --baseline 20200101-000000: no such baseline (baselines of site lab: none)"),
    (["smoke", "--compare", "run-a", "run-b"], "smoke: --compare: no smoke run 'run-a'"),
    (["deploy", LAB, "--format", "xml"], "racfg deploy"),
    (["drift", LAB, "--forks", "0"], "racfg drift"),
])
def test_a_name_that_does_not_exist_is_refused(monkeypatch, capsys, tmp_path, argv, message):
    code, text = racfg(monkeypatch, capsys, *argv)
    assert_refused(code, text, tmp_path, message)


@pytest.mark.parametrize("glob", ["*/network/mtu*", "dgx01/network/mtu[data0]", "*mtu*", "sw1/switches/*", "cluster/*"])
def test_check_globs_that_match_a_check_are_accepted(glob):
    opts.check_globs("validate", "--check", [glob], load_cluster(LAB))


# --- the lab's subcommands ---------------------------------------------------------------------

def _recorded_lab(tmp_path: Path, site: str) -> None:
    """A lab's state file as `lab up` leaves it: what the subcommands read to know its nodes."""
    host = {"name": "dgx01", "role": "dgx", "netns": "x", "mgmt": "198.18.0.11", "root": "/nonexistent"}
    switch = {"name": "sw1", "platform": "onyx", "netns": "y", "mgmt": "198.18.0.2", "config": "/nonexistent"}
    state = {"site": site, "inventory": LAB, "inventory_hash": "", "mgmt_bridge": "", "mgmt_gateway": "",
             "fabric": "ethernet", "scale_mbit_per_100g": 1, "image": "", "repo": "", "started": "",
             "complete": True, "hosts": {"dgx01": host}, "switches": {"sw1": switch}, "cables": []}
    (tmp_path / "lab" / site).mkdir(parents=True)
    (tmp_path / "lab" / site / "state.json").write_text(json.dumps(state))


@pytest.mark.parametrize(("argv", "message"), [
    (["lab", "exec", "dgx09", "--site", "unit", "--", "true"],
     "lab exec: NODE dgx09: no such lab host or switch (lab hosts and switches: dgx01, sw1)"),
    (["lab", "stop", "sw1", "--site", "unit"], "lab stop: HOST sw1: no such lab host (lab hosts: dgx01)"),
    (["lab", "start", "dgx09", "--site", "unit"], "lab start: HOST dgx09: no such lab host"),
    (["lab", "link", "sw9", "1/1", "--down", "--site", "unit"], "lab link: NODE sw9: no such lab host or switch"),
    (["lab", "swap", "dgx01:data0", "stor09:data0", "--site", "unit"], "lab swap: HOST:NIC stor09: no such lab host"),
    (["lab", "cut", "dgx01", "--after", "3", "--site", "unit"],
     "lab cut: SWITCH dgx01: no such lab switch (lab switches: sw1)"),
    (["lab", "cut", "sw1", "--after", "0", "--site", "unit"], "--after"),
])
def test_lab_subcommands_refuse_a_node_the_lab_lacks(monkeypatch, capsys, tmp_path, argv, message):
    _recorded_lab(tmp_path, "unit")
    code, text = racfg(monkeypatch, capsys, *argv)
    assert_refused(code, text, tmp_path, message)


def test_lab_subcommands_name_themselves_when_no_lab_is_up(monkeypatch, capsys, tmp_path):
    code, text = racfg(monkeypatch, capsys, "lab", "stop", "dgx01", "--site", "nosuch")
    assert code == 3, text
    assert "lab stop: no lab of site nosuch is up" in text, text


@pytest.mark.parametrize("command", ["check", "render", "deploy", "validate", "drift", "smoke"])
def test_a_missing_inventory_is_refused_by_name(monkeypatch, capsys, tmp_path, command):
    extra = ["--out", str(tmp_path / "out")] if command == "render" else []
    code, text = racfg(monkeypatch, capsys, command, "nosuch.yaml", *extra)
    assert_refused(code, text, tmp_path, f"{command}: nosuch.yaml: file not found")
