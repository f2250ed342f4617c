"""Which lab switches share a password (racfg.lab.switches.password_sources), without a lab: the
switches whose inventory credentials name one ``password_env``. tests/lab/test_lab_routed.py sees the
shared password files of a lab that is up."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.lab.switches import ensure_password, password_sources

REPO = Path(__file__).resolve().parents[2]

CASES = [
    # inventory, the switches that take an earlier switch's password
    ("inventory/ra-leafspine.yaml", {"leaf2": "leaf1", "leaf3": "leaf1", "leaf4": "leaf1",
                                     "spine1": "leaf1", "spine2": "leaf1"}),
    ("tests/lab/leafspine.yaml", {"lsspine2": "lsspine1"}),  # the leaves: lab: true, each its own
    ("inventory/lab.yaml", {}),
]


@pytest.mark.parametrize(("inventory", "expected"), CASES, ids=[c[0] for c in CASES])
def test_switches_naming_one_password_variable_share_the_first_ones_password(inventory: str,
                                                                          expected: dict[str, str]):
    assert password_sources(load_cluster(REPO / inventory)) == expected


def test_a_shared_password_file_is_a_copy_of_the_first_and_an_unshared_one_is_drawn_anew(tmp_path: Path):
    first = ensure_password(tmp_path / "leaf1")
    shared = ensure_password(tmp_path / "leaf2", same_as=first)
    own = ensure_password(tmp_path / "leaf3")
    assert shared.read_text() == first.read_text() != own.read_text()
    assert len(first.read_text().strip()) >= 16
    assert {p.stat().st_mode & 0o777 for p in (first, shared, own)} == {0o600}
    assert ensure_password(tmp_path / "leaf2").read_text() == first.read_text()  # kept for the life of the lab
