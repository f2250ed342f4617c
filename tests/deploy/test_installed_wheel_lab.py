"""racfg as users install it: the wheel built from this checkout, pip-installed into a fresh venv
with only the dependencies pyproject declares (no dev extra: no ``ansible`` collection bundle),
deploys and validates inventory/lab.yaml from a directory outside the checkout. The lab comes from
the lab's own wheel (lab/, racfg-lab) installed beside it, as a user adds it: the installed racfg
brings the lab up and down through it, and its provider hands deploy the lab's key and passwords;
the product wheel itself carries no lab (tests/structure/test_lab_package.py).
And Ansible's own reason reaches the user: the same installed racfg run on a copy of the roles
with a module name broken prints Ansible's error with its file and line and exits 3, in deploy
and in drift, on the terminal and in --format json.

The lab is inventory/lab.yaml under a site of its own (``wheellab``, 198.18.86.0/24 and
198.19.86.0/24), so it never meets the session lab of inventory/lab.yaml (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import labsupport as testing
import pytest
import sitelab

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
SITE = "wheellab"
BROKEN_MODULE = "racfg_no_such_module"


def site_inventory(directory: Path) -> Path:
    """inventory/lab.yaml with its own site name and subnets (198.18.0.x -> 198.18.86.x ...)."""
    text = (REPO / "inventory" / "lab.yaml").read_text()
    text = re.sub(r"^  name: lab$", f"  name: {SITE}", text, count=1, flags=re.M)
    text = re.sub(r"\b198\.(18|19)\.0\.", r"198.\1.86.", text)
    assert f"name: {SITE}" in text and "198.18.0." not in text
    path = directory / "lab.yaml"
    path.write_text(text)
    return path


@dataclass
class Installed:
    """racfg installed from its wheel in a venv, run from a directory outside the checkout."""

    venv: Path
    workdir: Path
    inventory: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "RACFG_STATE_DIR")}
        return {**env, "PATH": f"{self.venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", "RACFG_PLAIN": "1", **extra}

    def run(self, *argv: str, timeout: float = 900, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=self.workdir, env=self.env(**extra), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def racfg(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.venv / "bin" / "racfg"), *args, **extra)


def install_wheel(directory: Path) -> Path:
    """Build racfg's wheel and the lab's and install both into a fresh venv with their declared
    dependencies only."""
    for source in (REPO, REPO / "lab"):
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(directory / "dist"),
                        str(source)], check=True, capture_output=True, timeout=300)
    [wheel] = (directory / "dist").glob("racfg-*.whl")
    [lab_wheel] = (directory / "dist").glob("racfg_lab-*.whl")
    venv = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel), str(lab_wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The installed racfg with its lab up (``racfg lab up`` of the installed racfg), all removed afterwards."""
    testing.require_lab_prerequisites()
    from racfg_lab import lifecycle

    root = tmp_path_factory.mktemp("installed-wheel")
    workdir = root / "outside"
    workdir.mkdir()
    site = Installed(root / "venv", workdir, site_inventory(workdir))
    assert not workdir.is_relative_to(REPO)
    try:
        lifecycle.down(site.inventory)  # a lab of this site left by a run killed before its teardown
        install_wheel(root)
        up = site.racfg("lab", "up", str(site.inventory))
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-3000:]
        yield site
    finally:
        down = site.racfg("lab", "down", str(site.inventory)) if (site.venv / "bin" / "racfg").exists() else None
        lifecycle.down(site.inventory)  # whatever the installed racfg could not remove
        shutil.rmtree(root, ignore_errors=True)
        assert down is None or down.returncode == 0, down.stdout[-2000:] + down.stderr[-2000:]


def test_the_installed_wheel_alone_deploys_and_validates_the_lab_from_outside_the_checkout(installed):
    python = str(installed.venv / "bin" / "python")
    probe = installed.run(python, "-c", "import racfg.paths as p, racfg_lab; print(p.ansible_root()); "
                          "print(racfg_lab.__file__)")
    for path in probe.stdout.split():  # racfg's roles and the lab: both from the wheels, not the checkout
        assert Path(path).is_relative_to(installed.venv), probe.stdout + probe.stderr
    assert len(probe.stdout.split()) == 2, probe.stdout + probe.stderr
    no_bundle = installed.run(python, "-c", "import ansible_collections.ansible.posix")
    assert no_bundle.returncode != 0, "the venv has the ansible bundle: the test would not prove the wheel alone"

    deploy = installed.racfg("deploy", str(installed.inventory), "--yes")
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
    assert re.search(r"^deploy: \d+ change\(s\)", deploy.stdout, re.M), deploy.stdout[-2000:]
    assert "baseline recorded in" in deploy.stdout
    assert (installed.workdir / ".racfg" / "runs").is_dir()  # the records are the working directory's
    from racfg.inventory import load_cluster

    # time sync and LLDP converge in seconds after the deploy started them: validate checks both
    handle = testing.LabHandle(SITE, installed.inventory, load_cluster(installed.inventory))
    sitelab.DeployedSite(handle, installed.workdir / ".racfg").settled()

    validate = installed.racfg("validate", str(installed.inventory), "--format", "json")
    assert validate.returncode == 0, validate.stdout[-3000:] + validate.stderr[-3000:]
    report = json.loads(validate.stdout)
    assert report["summary"]["pass"] > 0 and report["summary"]["fail"] == 0, report["summary"]


def broken_checkout(directory: Path) -> tuple[Path, str]:
    """A copy of racfg, playbooks and roles whose nfs_client role calls a module that does not exist;
    the copy's racfg finds its roles beside it (racfg.paths). Returns (copy, "FILE:LINE:COL" of the task)."""
    copy = directory / "broken"
    for name in ("racfg", "playbooks", "roles"):
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "ansible.cfg", copy / "ansible.cfg")
    tasks = copy / "roles" / "nfs_client" / "tasks" / "main.yml"
    lines = tasks.read_text().splitlines(keepends=True)
    [number] = [i for i, line in enumerate(lines) if line.strip() == "racfg_mount:"]
    lines[number] = lines[number].replace("racfg_mount:", f"{BROKEN_MODULE}:")
    tasks.write_text("".join(lines))
    # Ansible names the task's first line (its "- name:"), column 3
    task_line = max(i for i in range(number) if lines[i].startswith("- name:")) + 1
    return copy, f"{tasks}:{task_line}:3"


def test_a_broken_module_name_reaches_the_user_with_its_file_and_line_and_exit_3(installed, tmp_path):
    copy, origin = broken_checkout(tmp_path)
    racfg = (str(installed.venv / "bin" / "python"), "-m", "racfg")
    expected = f"{origin}: couldn't resolve module/action '{BROKEN_MODULE}'"

    deploy = installed.run(*racfg, "deploy", str(installed.inventory), "--yes", PYTHONPATH=str(copy))
    assert deploy.returncode == 3, deploy.stdout[-3000:] + deploy.stderr[-3000:]
    assert "deploy: could not run: Ansible stopped before running the play:" in deploy.stdout, deploy.stdout
    assert expected in deploy.stdout, deploy.stdout
    assert "ok=0" not in deploy.stdout  # no recap of zeros

    as_json = installed.run(*racfg, "deploy", str(installed.inventory), "--yes", "--format", "json",
                            PYTHONPATH=str(copy))
    assert as_json.returncode == 3, as_json.stdout[-3000:] + as_json.stderr[-3000:]
    outcome = json.loads(as_json.stdout)
    assert outcome["exit_code"] == 3 and expected in outcome["could_not_run"]
    [error] = outcome["ansible_errors"]
    assert error["origin"] == origin
    assert error["message"].startswith(f"couldn't resolve module/action '{BROKEN_MODULE}'")

    drift = installed.run(*racfg, "drift", str(installed.inventory), "--format", "json", PYTHONPATH=str(copy))
    assert drift.returncode == 3, drift.stdout[-3000:] + drift.stderr[-3000:]
    [result] = json.loads(drift.stdout)["results"]
    assert result["status"] == "error" and result["check"] == "cluster/config/ansible", result
    assert "could not run" in result["message"] and expected in result["message"], result
