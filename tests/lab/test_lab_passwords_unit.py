"""Which lab switches share a password (racfg_lab.switches.password_sources), without a lab: the
switches whose inventory credentials name one ``password_env``. tests/lab/test_lab_routed.py sees the
shared password files of a lab that is up."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg_lab.switches import ensure_password, password_path, password_sources

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


def test_a_password_sits_in_a_directory_of_its_own_that_only_its_owner_enters(tmp_path: Path):
    """0600 in a 0700 directory, apart from the switch's own directory (which FRR, dropping privileges
    to the frr user, must enter); a directory left open by an older lab is tightened."""
    switch = tmp_path / "leaf1"
    path = ensure_password(switch)
    assert path == password_path(switch) and path.parent != switch
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    path.parent.chmod(0o755)
    assert ensure_password(switch).read_text() == path.read_text()
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_the_lab_ssh_key_is_private_in_a_private_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """ssh-keygen writes the key 0600; its directory is made 0700 even when it existed more open."""
    from racfg_lab import lifecycle

    monkeypatch.setenv("RACFG_LAB_DIR", str(tmp_path))
    key = lifecycle.ssh_key_path("keysite")
    key.parent.mkdir(parents=True, mode=0o755)
    key.parent.chmod(0o755)
    assert lifecycle._ensure_ssh_key("keysite").startswith("ssh-ed25519 ")
    assert (key.stat().st_mode & 0o777, key.parent.stat().st_mode & 0o777) == (0o600, 0o700)
