"""The wheel carries the Ansible content, and an installed racfg finds it outside a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_ships_playbooks_roles_validators(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(REPO)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("racfg-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("racfg/_ansible/playbooks/site.yml", "racfg/_ansible/playbooks/switches.yml",
                   "racfg/_ansible/roles/fabric/tasks/main.yml", "racfg/_ansible/roles/switch/library/racfg_switch.py",
                   "racfg/_ansible/ansible.cfg", "racfg/cli/app.py"):
        assert needed in names, needed
    assert any(n.startswith("racfg/_ansible/validators/") for n in names)
    unpacked = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(unpacked)
    found = subprocess.run(
        [sys.executable, "-c", "import racfg.paths as p; print(p.playbooks_dir()); print(p.roles_dir())"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env={"PYTHONPATH": str(unpacked)},
    ).stdout.split()
    assert found == [str(unpacked / "racfg/_ansible/playbooks"), str(unpacked / "racfg/_ansible/roles")]
