"""The common role's racfg_template lookup renders every template the roles' reads compare exactly as
ansible.builtin.template renders it (the text the template tasks write), on a rendered host's variables:
the probe's comparison must not change with the lookup that spares the copy of every variable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from racfg.inventory import load_cluster
from racfg.render import load_rendered, write_rendered

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "roles"
# Every template a racfg_template lookup renders (roles/*/tasks and vars), with the role whose
# defaults and vars it reads.
TEMPLATES = {
    "common": ["chrony.conf.j2", "lldpd.conf.j2", "chrony-no-clock-control.conf.j2", "cpu-governor.service.j2",
               "etc_hosts_block.j2"],
    "fabric": ["data.network.j2", "others-unmanaged.network.j2", "networkd-racfg.conf.j2", "netplan-data.yaml.j2"],
    "nvme_storage": ["nvme-scheduler.rules.j2"],
}


def host_variables(tmp_path: Path, host: str) -> dict[str, Any]:
    """The variables a role's template sees on ``host`` of the lab example: the roles' defaults and
    vars under the rendered inventory's group and host variables."""
    write_rendered(load_cluster(REPO / "inventory" / "lab.yaml"), tmp_path / "inventory")
    out: dict[str, Any] = {}
    for role in TEMPLATES:
        for part in ("defaults", "vars"):
            path = ROLES / role / part / "main.yml"
            if path.exists():
                out.update(yaml.safe_load(path.read_text()) or {})
    rendered = tmp_path / "inventory"
    for path in (rendered / "group_vars" / "all.yml", rendered / "host_vars" / f"{host}.yml"):
        out.update(load_rendered(path.read_text()) or {})
    return out


@pytest.mark.parametrize("host", ["dgx01", "stor01"])
def test_racfg_template_renders_what_the_builtin_template_lookup_renders(tmp_path: Path, host: str) -> None:
    variables = host_variables(tmp_path, host)
    variables.update({"common_data_nics": variables["racfg_nics"], "inventory_hostname": host,
                      "nvme_storage_drives": [{"kname": "nvme0n1", "serial": "S1", "model": "M"}]})
    pairs = {f"{role}/{name}": str(ROLES / role / "templates" / name) for role, names in TEMPLATES.items()
             for name in names}
    item = variables["racfg_nics"][0]
    rendered = {key: {who: f"{{{{ lookup('{plugin}', '{path}', template_vars={{'item': item}}) }}}}"
                      for who, plugin in (("ours", "racfg_template"), ("builtin", "ansible.builtin.template"))}
                for key, path in pairs.items()}
    play = [{"hosts": "localhost", "gather_facts": False, "vars": {**variables, "item": item, "rendered": rendered},
             "tasks": [{"ansible.builtin.copy": {"content": "{{ rendered | to_json }}", "mode": "0644",
                                                 "dest": str(tmp_path / "rendered.json")}}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    bin_dir = Path(sys.executable).parent
    run = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={"ANSIBLE_NOCOLOR": "1", "HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin",
                              "ANSIBLE_LOOKUP_PLUGINS": str(ROLES / "common" / "lookup_plugins"),
                              "ANSIBLE_FILTER_PLUGINS": str(ROLES / "fabric" / "filter_plugins")})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    result = json.loads((tmp_path / "rendered.json").read_text())
    assert set(result) == set(pairs)
    for key, texts in result.items():
        assert texts["ours"] == texts["builtin"], key
        assert texts["ours"].strip(), key  # rendered, not empty


def test_the_view_the_builtin_lookup_copies_shares_the_host_variables_and_keeps_its_additions() -> None:
    """What the builtin lookup does with the view on every ansible-core version: deep-copies it, then
    adds the template_* variables and template_vars to the copy. The copy reads the same objects (no
    copy of them) and what it adds never reaches the host's variables."""
    import copy
    import importlib.util

    spec = importlib.util.spec_from_file_location("racfg_template", ROLES / "common" / "lookup_plugins"
                                                  / "racfg_template.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    host = {"racfg_nics": [{"name": "data0"}], "inventory_hostname": "dgx01"}
    view = plugin.SharedVariables(host)
    copied = copy.deepcopy(view)
    copied.update({"template_path": "/x.j2", "item": 1})
    assert copied["racfg_nics"] is host["racfg_nics"] and copied["item"] == 1
    assert host == {"racfg_nics": [{"name": "data0"}], "inventory_hostname": "dgx01"}
    assert "item" not in view
