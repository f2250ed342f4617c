"""Loading: every bad file gives one located, readable error (never a traceback)."""

from __future__ import annotations

import pytest

from racfg.inventory import InventoryError, load_cluster
from tests.inventory.conftest import base


def problems(path):
    with pytest.raises(InventoryError) as info:
        load_cluster(path)
    return info.value.problems


def test_valid_base_expands_ranges(make_cluster):
    cluster = make_cluster(base())
    names = [h.name for h in cluster.hosts]
    assert names[:3] == ["dgx01", "dgx02", "st01"] and names[-1] == "st08"
    st08 = cluster.hosts[-1]
    assert str(st08.mgmt) == "198.18.0.28"
    assert str(st08.nics[0].address) == "198.19.0.28/24"
    assert st08.nics[0].port == "1/24"
    assert [d.path for d in st08.drives] == [f"/dev/nvme{i}n1" for i in range(6)]
    assert cluster.hosts[0].gpus == 8  # from the DGX-1 model


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("", 1, "empty"),
        ("site: [unclosed\n", 2, "not valid YAML"),
        ("site:\n\tname: x\n", 2, "tab"),
        ("site: {name: a}\nsite: {name: b}\n", 2, "duplicate key 'site' (first at line 1)"),
        ("- a\n- b\n", 1, "top level must be a mapping"),
        ("a: 1\n---\nb: 2\n", 3, "more than one YAML document"),
    ],
)
def test_unreadable_files(write_inventory, text, line, needle):
    [problem] = problems(write_inventory(text))
    assert problem.line == line
    assert needle in str(problem)


def test_missing_file_is_a_problem(tmp_path):
    [problem] = problems(tmp_path / "nope.yaml")
    assert "file not found" in problem.message


def test_unknown_key_names_place_and_suggests(write_inventory):
    text = (
        "site: {name: t}\n"
        "fabric:\n"
        "  type: ethernet\n"
        "  host_mut: 9000\n"
        "switches: []\n"
        "hosts: []\n"
    )
    found = problems(write_inventory(text))
    unknown = [p for p in found if p.path == "fabric.host_mut"]
    assert len(unknown) == 1
    assert unknown[0].line == 4
    assert "unknown key 'host_mut'" in str(unknown[0])
    assert "did you mean 'host_mtu'?" in str(unknown[0])


def test_wrong_type_says_expected_and_found(write_inventory):
    data = base()
    data["switches"][0]["ports"] = "many"
    path = write_inventory(data)
    [problem] = problems(path)
    assert problem.path == "switches[0].ports"
    assert problem.found == "'many'"
    assert "valid integer" in problem.message
    text = path.read_text().splitlines()
    assert "ports: many" in text[problem.line - 1]


def test_bad_literal_and_nested_path(write_inventory):
    data = base()
    data["hosts"][1]["nics"][0]["address"] = "198.19.0.21"
    data["hosts"][0]["role"] = "gpu"
    found = {p.path: p for p in problems(write_inventory(data))}
    assert "hosts[0].role" in found and "'dgx' or 'storage'" in found["hosts[0].role"].message
    assert "prefix length" in found["hosts[1].nics[0].address"].message


def test_clear_text_password_is_refused(write_inventory):
    data = base()
    data["switches"][0]["credentials"] = {"username": "admin", "password": "hunter2"}
    [problem] = problems(write_inventory(data))
    assert problem.path == "switches[0].credentials"
    assert "clear text" in problem.message
    assert "hunter2" not in str(problem)


def test_bad_range(write_inventory):
    data = base()
    data["hosts"][0]["name"] = "dgx[09:01]"
    [problem] = problems(write_inventory(data))
    assert problem.path == "hosts[0].name" and "before its start" in problem.message


def test_missing_required_key(write_inventory):
    data = base()
    del data["fabric"]
    [problem] = problems(write_inventory(data))
    assert problem.path == "fabric" and "required key 'fabric' is missing" in problem.message


def test_defaults_apply_per_role(make_cluster):
    data = base()
    data["defaults"] = {"all": {"ssh_user": "ops"}, "storage": {"ssh_user": "weka"}}
    cluster = make_cluster(data)
    assert {h.role: h.ssh_user for h in cluster.hosts} == {"dgx": "ops", "storage": "weka"}


def test_file_level_errors_show_no_line_and_containers_are_named(tmp_path):
    """`site.yaml:0` points nowhere: a problem with the whole file names the file alone; a top-level
    list is called a list (it printed `(found: ist)`)."""
    missing = tmp_path / "site.yaml"
    [problem] = problems(missing)
    assert str(problem) == f"{missing}: file not found"
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    [problem] = problems(listed)
    assert str(problem).startswith(f"{listed}:1: the top level must be a mapping")
    assert str(problem).endswith("(found: a list)")
