"""The lab is a distribution of its own (racfg-lab, lab/): the product wheel carries none of it, and
a racfg without it says how to install it when asked for ``racfg lab`` or ``racfg demo`` (exit 3).

The wheel is built here as users build it (hatchling, the build backend pyproject names), so a
packaging change that brings the emulator, image builder or servers back into the product fails.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# the emulated switch OS, the servers and the image and repository builders, by the names they have in the lab
LAB_NAMES = {"switchcli", "httpserver.py", "timeserver.py", "mlnxofed.py", "bootlog.py", "netns.py"}


def build_wheel(source: Path, out: Path) -> list[str]:
    """The file list of the wheel hatchling builds from ``source``."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)], cwd=source,
                   check=True, capture_output=True, timeout=300)
    [wheel] = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_product_wheel_carries_no_lab_and_the_lab_wheel_carries_it(tmp_path):
    product = build_wheel(REPO, tmp_path / "product")
    assert "racfg/cli/app.py" in product and "racfg/_ansible/ansible.cfg" in product
    lab_files = [name for name in product if name.startswith(("racfg_lab/", "racfg/lab/", "lab/"))
                 or LAB_NAMES & set(name.split("/"))]
    assert lab_files == []
    lab = build_wheel(REPO / "lab", tmp_path / "lab")
    assert {f"racfg_lab/{module}" for module in ("switchcli/__main__.py", "switchcli/eos/eapi.py",
                                                 "switchcli/mlnx/grammar.py", "httpserver.py", "image.py", "cli.py")} \
        <= set(lab)
    assert not any(name.startswith("racfg/") for name in lab)
    [entry_points] = [name for name in lab if name.endswith(".dist-info/entry_points.txt")]
    assert entry_points  # racfg's CLI finds `racfg lab` through it


def test_the_racfg_package_holds_no_lab():
    assert not (REPO / "racfg" / "lab").exists()
    assert (REPO / "lab" / "racfg_lab" / "switchcli").is_dir()


MISSING_LAB = """
import importlib.metadata as metadata, sys
sys.modules["racfg_lab"] = None  # the import system's own "not importable" mark
found = metadata.distribution
def distribution(name):
    if name == "racfg-lab":
        raise metadata.PackageNotFoundError(name)
    return found(name)
metadata.distribution = distribution
sys.argv = ["racfg", *sys.argv[1:]]
from racfg.cli import main
main()
"""


@pytest.mark.parametrize("argv", [["lab", "--help"], ["demo", "--help"], ["lab", "up", "inventory/lab.yaml"],
                                  ["demo", "inventory/lab.yaml"]])
def test_without_the_lab_package_lab_and_demo_say_how_to_install_it_and_exit_3(argv):
    proc = subprocess.run([sys.executable, "-c", MISSING_LAB, *argv], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == (f"racfg: error: {argv[0]}: the virtual lab (package racfg-lab) is not installed "
                           "(hint: pip install racfg-lab; in a racfg checkout: make setup, or pip install -e lab)\n")


def test_without_the_lab_package_the_other_commands_run():
    proc = subprocess.run([sys.executable, "-c", MISSING_LAB, "check", "inventory/lab.yaml"], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "racfg_lab" not in proc.stderr
