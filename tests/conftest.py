"""Shared fixtures. ``lab``: a real virtual lab of inventory/lab.yaml for tests marked ``lab``.

The lab is brought up once per session (a cached image makes that a few seconds) and always
torn down at the end, even when tests fail. Outside CI a machine that cannot build a lab
(not root, no systemd-nspawn) skips the lab tests; in CI (CI=true) it fails them instead, so
a lab test can never silently stop running there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest
import sitelab

REPO = Path(__file__).resolve().parent.parent
LAB_INVENTORY = Path(os.environ.get("RACFG_LAB_INVENTORY", REPO / "inventory" / "lab.yaml"))


@pytest.fixture(scope="session")
def lab() -> Iterator[testing.LabHandle]:
    """A running lab of inventory/lab.yaml (``RACFG_LAB_INVENTORY`` overrides), torn down after the session."""
    with testing.running_lab(LAB_INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="session")
def deployed_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sitelab.DeployedSite]:
    """tests/vallab.yaml built fresh and deployed once per session; shared by validate and drift."""
    with testing.running_lab(sitelab.INVENTORY, fresh=True) as handle:
        site = sitelab.DeployedSite(handle, tmp_path_factory.mktemp("vallab-state"))
        site.deploy()
        site.settled()
        yield site


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests using the ``lab`` fixture must carry the ``lab`` marker (so ``-m "not lab"`` deselects them)."""
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)
