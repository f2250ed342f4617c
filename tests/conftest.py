"""Shared fixtures. ``lab``: a real virtual lab of inventory/lab.yaml for tests marked ``lab``.

The lab is brought up once per session (a cached image makes that a few seconds) and always
torn down at the end, even when tests fail. Outside CI a machine that cannot build a lab
(not root, no systemd-nspawn) skips the lab tests; in CI (CI=true) it fails them instead, so
a lab test can never silently stop running there.

``make test`` runs the suite on two pytest-xdist workers, then the ``solo`` tests (rates and
bursts measured on the lab) one at a time with nothing beside them. Run on one worker, the
suite left both CPUs idle 38% of the time (a chrony sync, an LLDP interval, a link shaped low, a
host booting); the other worker fills much of that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
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
    with testing.running_lab(sitelab.INVENTORY) as handle:
        site = sitelab.DeployedSite(handle, tmp_path_factory.mktemp("vallab-state"))
        site.deploy(sample_argv=True)  # every process's argv read meanwhile (secretscan)
        site.settled()
        yield site


# --- two workers (make test: pytest -n 2) -------------------------------------------------------
# A test module's labs are module- or session-scoped, each with a site of its own: split over two
# workers, one site would be built twice at once. So a worker takes whole modules, and the modules
# that share a session lab go to one worker together. The controller sees only test ids, hence a
# table; collection checks it against the fixtures the tests really use. (xdist's own
# ``--dist loadgroup`` groups nothing under pytest 9.2: it marks the groups in the test ids through
# an attribute pytest no longer reads; seen with pytest-xdist 3.8.)
SHARED_LAB_MODULES = {
    "lab": ("tests/deploy/test_deploy_lab.py", "tests/faults/test_owned_state_lab.py",
            "tests/lab/test_lab_integration.py"),
    "deployed_site": ("tests/drift/test_drift_lab.py", "tests/faults/test_planted_faults_lab.py",
                      "tests/validate/test_validate_lab.py"),
}


# --- what differs between ansible-core versions (scripts/ansible-versions.sh) -------------------
# The oldest and the newest supported ansible-core each run the deploy/validate lab round and the
# unit tests of what hands work to ansible-core or runs under it, not the whole unit suite again:
# the rest (schema, parsers, verdicts, reports) never reaches ansible-core, and ran 1,000 tests
# twice more for nothing (about 1.5 of the versions' 7 minutes). Read from each module's source,
# so a new test of that kind is marked without a list to keep.
ANSIBLE_FACING = re.compile(r"^\s*(from|import) (ansible|ansible_runner)\b|racfg\.playbook\b"
                            r"|\bansible-(playbook|inventory)\b", re.MULTILINE)


@cache
def ansible_facing(path: Path) -> bool:
    """The test module at ``path`` drives ansible-core or code that runs under it (the roles' own)."""
    return "roles" in path.parts or bool(ANSIBLE_FACING.search((REPO / path).read_text(encoding="utf-8")))


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def worker_unit(nodeid: str) -> str:
    """What one worker runs together: the shared lab of the test's module, or else its module."""
    module = module_of(nodeid)
    return next((f"shared lab {fixture}" for fixture, modules in SHARED_LAB_MODULES.items() if module in modules),
                module)


def _uses_session_fixture(item: pytest.Item, name: str) -> bool:
    """``item`` uses this file's session fixture ``name`` (a module's own ``lab`` is another lab)."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.get(name, ()) if info is not None else ()
    return bool(definitions) and definitions[-1].scope == "session"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Whole modules per worker, shared labs together (``worker_unit``), in the order collected."""
    from xdist.scheduler import LoadScopeScheduling

    class WholeModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_unit(nodeid)

    config.option.loadscopereorder = False  # our order (pytest_collection_modifyitems), not by test count
    return WholeModules(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests using the ``lab`` fixture must carry the ``lab`` marker (so ``-m "not lab"`` deselects them),
    and the ansible-facing ones the ``ansible`` marker (``ansible_facing``).

    A module using a shared session lab that ``SHARED_LAB_MODULES`` does not name stops the run
    (two workers would build that lab at once). The run starts with the longest work: the shared
    labs' modules, then the other lab modules, then the rest, each in the order collected (so the
    modules of a shared lab keep theirs). Two workers given the longest work first finish together
    instead of one waiting on the other's last lab.
    """
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)
        if ansible_facing(Path(str(item.path)).relative_to(REPO)):
            item.add_marker(pytest.mark.ansible)
    unlisted = sorted({f"{module_of(item.nodeid)} uses the session fixture {fixture!r}"
                       for item in items for fixture, modules in SHARED_LAB_MODULES.items()
                       if _uses_session_fixture(item, fixture) and module_of(item.nodeid) not in modules})
    if unlisted:
        raise pytest.UsageError("tests/conftest.py SHARED_LAB_MODULES does not list: " + "; ".join(unlisted))

    weight: dict[str, int] = {}  # per module, never per test: a module's tests keep their order
    for item in items:
        module = module_of(item.nodeid)
        own = 0 if worker_unit(item.nodeid) != module else 1 if item.get_closest_marker("lab") else 2
        weight[module] = min(weight.get(module, own), own)
    items.sort(key=lambda item: weight[module_of(item.nodeid)])  # stable: else the order collected
