"""The rendered variables are data to Ansible: a template that reached them anyway (the schema
bypassed: an edited model, a future field) is passed on as text by a real ansible-playbook run, never
evaluated; the same variables written without ``!unsafe`` would have run it on the controller."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from racfg.inventory import load_cluster
from racfg.render import load_rendered, write_rendered

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _render_with(tmp_path: Path, payload: str) -> Path:
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    # the schema refuses these values (tests/inventory/test_hostile.py): put them past it
    site = cluster.inventory.site.model_copy(update={"time_sources": [payload]})
    cluster.inventory = cluster.inventory.model_copy(update={"site": site})
    cluster.hosts[0].gpu_model = payload
    out = tmp_path / "inventory"
    write_rendered(cluster, out)
    return out


def _play(tmp_path: Path, inventory: Path) -> subprocess.CompletedProcess[str]:
    """What a role does with the variables: read them into a fact and a file on the controller."""
    seen = tmp_path / "seen.json"
    play = [{"hosts": "dgx01", "connection": "local", "gather_facts": False, "tasks": [
        {"ansible.builtin.set_fact": {"seen": {"sources": "{{ racfg_time_sources | join(',') }}",
                                               "gpu": "{{ racfg_gpu_model }}"}}},
        {"ansible.builtin.copy": {"content": "{{ seen | to_json }}", "dest": str(seen), "mode": "0600"}},
    ]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory / "hosts.yml"),
                           "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={"HOME": str(tmp_path), "PATH": f"{BIN}:/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1"})


def test_a_template_in_a_rendered_variable_is_not_evaluated_by_ansible(tmp_path: Path) -> None:
    marker = tmp_path / "evaluated"
    payload = f"{{{{ lookup('pipe', 'touch {marker}') }}}}"
    inventory = _render_with(tmp_path, payload)
    assert "!unsafe" in (inventory / "group_vars" / "all.yml").read_text()
    run = _play(tmp_path, inventory)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert not marker.exists()
    assert json.loads((tmp_path / "seen.json").read_text()) == {"sources": payload, "gpu": payload}


def test_the_same_variables_without_unsafe_would_run_it(tmp_path: Path) -> None:
    """The control: written as plain strings, Ansible evaluates the value and runs the command. (What
    the test above proves is racfg's doing, not a payload that never worked.)"""
    marker = tmp_path / "evaluated"
    inventory = _render_with(tmp_path, f"{{{{ lookup('pipe', 'touch {marker}') }}}}")
    for path in [inventory / "group_vars" / "all.yml", *(inventory / "host_vars").glob("*.yml")]:
        path.write_text(yaml.safe_dump(load_rendered(path.read_text())))
    _play(tmp_path, inventory)
    assert marker.exists()
