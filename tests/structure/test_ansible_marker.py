"""The ``ansible`` marker (tests/conftest.py) selects what scripts/ansible-versions.sh runs on the
oldest and the newest ansible-core: a module it misses would go untested there, so hold the rule on
modules of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, ansible_facing


@pytest.mark.parametrize("module", [
    "tests/deploy/test_tracker.py",          # ansible-runner's events, read by racfg
    "tests/inventory/test_render_unsafe.py",  # what render writes, read by ansible itself
    "tests/roles/test_weka_plan.py",          # the roles' own Python, run under ansible
    "tests/switches/test_host_keys.py",       # a switch's host key, refused by the ssh connection
])
def test_a_module_that_reaches_ansible_core_is_marked(module: str) -> None:
    assert ansible_facing(Path(module)), module


@pytest.mark.parametrize("module", ["tests/hostfacts/test_weka.py", "tests/inventory/test_cli.py",
                                    "tests/structure/test_ansible_marker.py"])
def test_a_module_that_never_reaches_ansible_core_is_not(module: str) -> None:
    assert (REPO / module).exists() and not ansible_facing(Path(module)), module
