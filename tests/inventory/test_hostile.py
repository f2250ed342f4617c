"""Hostile inventories, as a careless or hostile author would write them (issue 51): each one through
the real ``racfg check`` (and ``render``) is exit 2 with ``file:line path: what is wrong`` and what is
allowed, before anything is rendered, and nothing it asks for happens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from racfg.inventory import InventoryError, load_cluster
from racfg.inventory.model.text import RESERVED_VARS
from racfg.inventory.source import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES, format_path

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventory" / "lab.yaml"


def racfg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "racfg", *args], capture_output=True, text=True, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"}, timeout=120)


def lab() -> dict[str, Any]:
    return yaml.safe_load(LAB.read_text())


def _time_source(d: dict, marker: Path) -> None:
    d["site"]["time_sources"] = [f"{{{{ lookup('pipe', 'touch {marker}') }}}}"]


def _gpu_model(d: dict, marker: Path) -> None:
    d["hosts"][0]["gpu_model"] = f"{{{{ lookup('pipe', 'touch {marker}') }}}}"


def _sysctl_key(d: dict, marker: Path) -> None:
    d["software"]["tuning"] = {"sysctl": {"x./etc/motd": "owned"}}


def _sysctl_newline(d: dict, marker: Path) -> None:
    d["software"]["tuning"] = {"sysctl": {"net.core.rmem_max": f"1\nkernel.core_pattern = |{marker}"}}


def _mount_point(d: dict, marker: Path) -> None:
    d["software"]["weka"]["mount_point"] = f"/mnt/weka;touch {marker}"


def _ssh_args(d: dict, marker: Path) -> None:
    d["hosts"][0]["vars"] = {"ansible_ssh_common_args": f"-o ProxyCommand=touch {marker}"}


def _dns_domain(d: dict, marker: Path) -> None:
    d["site"]["dns_domain"] = "example.org\n198.18.0.99 dgx01.example.org"


# the inventory, the path named, a text on the line named, what the message says is wrong, what is allowed
HOSTILE: dict[str, tuple[Callable[[dict, Path], None], str, str, str, str]] = {
    "time_sources template": (_time_source, "site.time_sources[0]", "lookup", "holds '{{'", "remove the braces"),
    "gpu_model template": (_gpu_model, "hosts[0].gpu_model", "gpu_model", "holds '{{'", "remove the braces"),
    "sysctl key out of /proc/sys": (_sysctl_key, "software.tuning.sysctl.x./etc/motd", "x./etc/motd",
                                    "expected a sysctl key a.b.c", "no '/', no '..'"),
    "sysctl value with a newline": (_sysctl_newline, "software.tuning.sysctl.net.core.rmem_max", "rmem_max",
                                    "holds a newline", "one line of printable text"),
    "mount point with a command": (_mount_point, "software.weka.mount_point", "mount_point",
                                   "expected an absolute path", "no blanks"),
    "vars with a connection variable": (_ssh_args, "hosts[0].vars.ansible_ssh_common_args", "ansible_ssh_common_args",
                                        "'ansible_ssh_common_args' may not be set here", "(ansible_*)"),
    "dns_domain with a newline": (_dns_domain, "site.dns_domain", "dns_domain", "holds a newline",
                                  "one line of printable text"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_racfg_check_refuses_each_hostile_inventory_with_its_place(tmp_path: Path, case: str) -> None:
    bend, place, key, wrong, allowed = HOSTILE[case]
    marker = tmp_path / "x"  # what the value would create if anything ran it
    data = lab()
    bend(data, marker)
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if key in text)
    result = racfg("check", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{path}:{line} {place}: " in result.stderr, result.stderr
    assert wrong in result.stderr and allowed in result.stderr
    assert "Traceback" not in result.stderr
    out = tmp_path / "rendered"
    rendered = racfg("render", str(path), "--out", str(out))
    assert rendered.returncode == 2 and f"{path}:{line} {place}: " in rendered.stderr
    assert not out.exists() and not marker.exists()


def _bomb(levels: int = 9, width: int = 10) -> str:
    text = "site: {name: bomb}\na: &a [" + ", ".join(['"lol"'] * width) + "]\n"
    for level in range(1, levels):
        text += f"l{level}: &l{level} [" + ", ".join([f"*{'a' if level == 1 else f'l{level - 1}'}"] * width) + "]\n"
    return text


def test_an_alias_bomb_is_refused_at_the_alias_that_overflows(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    result = racfg("check", str(path))
    assert result.returncode == 2
    # 10 + 100 + ... : the level of 10^7 values (line 8) is the first past the bound
    assert f"{path}:8: the file holds more than {MAX_VALUES:,} values once its aliases are expanded" in result.stderr


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:  # 100 MB of it, sparse: stat says 100 MB, and the loader never reads it
        handle.truncate(100 * 1000 * 1000)
    result = racfg("check", str(path))
    assert result.returncode == 2
    assert f"{path}: the file is 95.4 MiB; an inventory may be at most {MAX_FILE_BYTES // 2**20} MiB" in result.stderr


@pytest.mark.parametrize(("style", "text"), [
    ("block", "- " * 10_000 + "x\n"),
    ("flow", "[" * 10_000 + "]" * 10_000 + "\n"),
    ("mapping", "".join(" " * i + "a:\n" for i in range(200)) + " " * 200 + "b\n"),
])
def test_deep_nesting_is_refused_without_a_crash(tmp_path: Path, style: str, text: str) -> None:
    path = tmp_path / f"{style}.yaml"
    path.write_text(text)
    result = racfg("check", str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = 65 if style == "mapping" else 1
    assert f"{path}:{line}: nested more than {MAX_DEPTH} levels deep" in result.stderr


@pytest.mark.parametrize(("text", "line", "message"), [
    ("a: &a [*a]\n", 1, "alias *a refers to a value that contains it"),
    ("a: *nowhere\n", 1, "alias *nowhere refers to no anchor defined before it"),
    ("a: &x " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*x" + "]" * 30 + "\n", 2,
     f"nested more than {MAX_DEPTH} levels deep once its aliases are expanded"),
])
def test_aliases_cannot_make_a_cycle_or_hide_depth(write_inventory: Callable[..., Path], text: str, line: int,
                                                   message: str) -> None:
    with pytest.raises(InventoryError) as info:
        load_cluster(write_inventory(text))
    [problem] = info.value.problems
    assert (problem.line, problem.message) == (line, message)


def test_aliases_within_the_bounds_still_load(write_inventory: Callable[..., Path]) -> None:
    """An anchor used a few times (a shared NIC list) is as good as writing it out."""
    text = LAB.read_text().replace("  dgx:\n    model: DGX-1", "  dgx: &dgx\n    model: DGX-1").replace(
        "  storage:\n    model: lab-nvme-node", "  storage:\n    gpus: 0\n    model: lab-nvme-node")
    assert len(load_cluster(write_inventory(text)).hosts) == 4


@pytest.mark.parametrize(("value", "wrong"), [
    ("a\tb", "holds a tab"), ("a\rb", "holds a carriage return"), ("a\x00b", "holds a NUL byte"),
    ("a\x7fb", "U+007F"), ("a\u2028b", "U+2028"), ("a\u202eb", "U+202E"), ("{% if x %}", "holds '{%'"),
    ("{# x #}", "holds '{#'"),
])
def test_no_string_anywhere_holds_a_control_character_or_a_template(make_inventory_file, value: str,
                                                                    wrong: str) -> None:
    """Checked on the whole loaded file: a field the schema would otherwise take as free text (site
    description), a key (a sysctl name), a value deep in vars."""
    for bend, place in [(lambda d: d["site"].update(description=value), "site.description"),
                        (lambda d: d["hosts"][0].update(vars={"common_note": {"deep": [value]}}),
                         "hosts[0].vars.common_note.deep[0]"),
                        (lambda d: d["software"].update(tuning={"sysctl": {f"net.{value}": 1}}),
                         format_path(("software", "tuning", "sysctl", f"net.{value}")))]:
        with pytest.raises(InventoryError) as info:
            load_cluster(make_inventory_file(bend))
        found = {p.path: p.message for p in info.value.problems}
        assert place in found and wrong in found[place], found


@pytest.fixture
def make_inventory_file(tmp_path: Path) -> Callable[[Callable[[dict], Any]], Path]:
    def make(bend: Callable[[dict], Any]) -> Path:
        data = lab()
        bend(data)
        path = tmp_path / "site.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
        return path

    return make


@pytest.mark.parametrize("name", ["ansible_host", "ansible_become_exe", "ANSIBLE_shell_executable", "racfg_role",
                                  "hostvars", "omit", "environment", "inventory_hostname", "lookup", "with_items",
                                  "2fast", "foo-bar"])
def test_vars_cannot_set_connection_become_shell_racfg_or_reserved_names(make_inventory_file, name: str) -> None:
    with pytest.raises(InventoryError) as info:
        load_cluster(make_inventory_file(lambda d: d["defaults"]["dgx"].update(vars={name: "x"})))
    [problem] = info.value.problems
    assert problem.path == f"defaults.dgx.vars.{name}"


def test_vars_may_set_a_role_setting_and_python_is_its_own_field(make_inventory_file) -> None:
    def bend(d: dict) -> None:
        d["hosts"][0].update(vars={"fabric_ping_tries": 9}, python="/opt/python3/bin/python3")

    cluster = load_cluster(make_inventory_file(bend))
    from racfg.render.ansible_inventory import host_vars

    rendered = host_vars(cluster, cluster.hosts[0])
    assert rendered["fabric_ping_tries"] == 9
    assert rendered["ansible_python_interpreter"] == "/opt/python3/bin/python3"
    assert host_vars(cluster, cluster.hosts[2])["ansible_python_interpreter"] == "/usr/bin/python3"


def test_the_reserved_names_cover_ansibles_own() -> None:
    """The deny-list is racfg's (the schema does not import Ansible): it must hold every name the
    installed ansible-core reserves."""
    from ansible.vars.reserved import get_reserved_names

    missing = {n for n in get_reserved_names() if n not in RESERVED_VARS and not n.startswith(("ansible_", "with_"))}
    assert missing == set()


def _set(data: dict, path: str, value: Any) -> None:
    *parents, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    node: Any = data
    for part in parents:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[part]
    node[last] = value


# field (a /-separated path into the base inventory) -> values it takes, values it refuses
TEXT_FIELDS: dict[str, tuple[list[Any], list[Any]]] = {
    "site/time_sources": ([["ntp1.example.org", "198.18.0.1", "2001:db8::1"]],
                          [["ntp1;reboot"], ["-oProxyCommand=x"], ["a b"]]),
    "site/dns_domain": (["example.org", "lab"], ["example..org", "exa mple.org", "-x.org", "x.org;"]),
    "site/description": (["Hall 3, row 2 (the GPU pod)"], ["x" * 300]),
    "software/weka/mount_point": (["/mnt/weka2"], ["mnt/weka", "/mnt/../etc", "/", "/mnt/we ka", "/mnt/$(x)"]),
    "software/weka/filesystem": (["fs-1.a"], ["a b", "a;b", "-x"]),
    "software/tuning/sysctl": ([{"net.ipv4.tcp_rmem": "4096 87380 134217728", "kernel.pid_max": 4194304,
                                 "kernel.core_pattern": "|/usr/lib/systemd/systemd-coredump %P"}],
                               [{"kernel": 1}, {"net..x": 1}, {"net/x.y": 1}, {"net.core.x": "\u00e9"}]),
    "hosts/0/ssh_user": (["ubuntu"], ["root;x", "-oProxyCommand", "a b"]),
    "hosts/0/ssh_key": (["~/.ssh/id_ed25519"], ["-i", "a b", "../../x"]),
    "hosts/0/python": (["/opt/python3/bin/python3"], ["python3", "/usr/bin/python3 -c x"]),
    "hosts/0/nics/0/port": (["1/2", 3], ["1/1;x", "1/1 2"]),
    "switches/0/credentials/password_env": (["SW_PASS"], ["SW-PASS", "1X"]),
    "software/ofed": ([{"flavor": "mlnx", "source": "https://example.org/ofed.tgz", "sha256": "0" * 64,
                        "install_flags": ["--force"]}],
                      [{"flavor": "mlnx", "source": "http://x/y z"}, {"flavor": "mlnx", "install_flags": ["--x;y"]}]),
}


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_each_text_field_takes_what_it_names_and_nothing_else(write_inventory: Callable[..., Path],
                                                              field: str) -> None:
    from tests.inventory.conftest import base

    good, bad = TEXT_FIELDS[field]
    for value in good:
        data = base()
        _set(data, field, value)
        load_cluster(write_inventory(data))
    for value in bad:
        data = base()
        _set(data, field, value)
        with pytest.raises(InventoryError) as info:
            load_cluster(write_inventory(data))
        place = field.replace("/", ".").replace(".0", "[0]")
        assert any(p.path.startswith(place) for p in info.value.problems), (value, info.value.problems)


@pytest.mark.parametrize("path", [*sorted((REPO / "inventory").glob("*.yaml")), REPO / "bench" / "pod128.yaml"],
                         ids=lambda p: p.name)
def test_the_bounded_loader_reads_what_pyyaml_reads(path: Path) -> None:
    """The loader that counts while it reads builds the same values as PyYAML's own safe_load (keys
    as text: racfg's loader reads every key as one, 1: as '1')."""
    from racfg.inventory.source import load_yaml

    assert load_yaml(path) == _text_keys(yaml.safe_load(path.read_text()))


def _text_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(key): _text_keys(value) for key, value in node.items()}
    return [_text_keys(value) for value in node] if isinstance(node, list) else node


def test_anchors_and_aliases_read_as_pyyaml_reads_them(write_inventory: Callable[..., Path]) -> None:
    from racfg.inventory.source import load_yaml

    text = "a: &n {x: [1, 2.5, true, null, '3', 2026-01-02]}\nb: *n\nc: [*n, &s text, *s]\nd: {? k : v}\n"
    assert load_yaml(write_inventory(text)) == _text_keys(yaml.safe_load(text))


def test_a_range_bomb_is_refused_before_any_host_is_built(tmp_path: Path) -> None:
    """Fifty lines of 100,000-host ranges would be 5,000,000 hosts: refused at the entry that passes the
    bound, counted from the ranges, not by building them."""
    from racfg.inventory.cluster import MAX_EXPANDED

    data = lab()
    data["hosts"] = [{"name": f"h{i}x[1:100000]", "role": "dgx", "mgmt": "198.18.0.11"} for i in range(50)]
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    # each dgx host is itself and its one data NIC (lab.yaml's defaults): the second entry passes the bound
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if "h1x" in text)
    result = racfg("check", str(path))
    assert result.returncode == 2
    assert (f"{path}:{line} hosts[1].name: the hosts expand to more than {MAX_EXPANDED:,} hosts, NICs and drives"
            in result.stderr)


def test_links_that_name_more_links_than_the_bound_are_one_problem() -> None:
    data = yaml.safe_load((REPO / "inventory" / "ra-leafspine.yaml").read_text())
    data["links"][0].update(leaves="leaf[1:100000]", spines="spine[1:100000]")
    with pytest.raises(InventoryError) as info:
        from racfg.inventory.cluster import build_cluster
        from racfg.inventory.loader import parse_inventory, with_topology

        with_topology(build_cluster(parse_inventory(data, "x.yaml"), Path("x.yaml"), "x.yaml", data))
    [problem] = info.value.problems
    isls = 100_000 * 100_000 * data["links"][0]["count"]
    assert problem.path == "links" and f"name {isls:,} inter-switch links" in problem.message
