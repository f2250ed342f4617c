"""site.yml's structure: switches first, every role tagged with its name, plays on the right groups."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = ["common", "fabric", "ofed", "gpu", "nvme_storage", "weka"]


def test_switch_play_comes_first_and_roles_target_their_groups() -> None:
    plays = yaml.safe_load((REPO / "playbooks/site.yml").read_text())
    assert plays[0]["ansible.builtin.import_playbook"] == "switches.yml" and plays[0]["tags"] == ["switch"]
    role_plays = plays[1:]
    targets = {r["role"]: p["hosts"] for p in role_plays for r in p["roles"]}
    assert targets == {"common": "cluster", "fabric": "cluster", "ofed": "cluster", "healthcheck": "cluster",
                       "gpu": "dgx", "nfs_client": "dgx", "nvme_storage": "storage", "weka": "cluster"}
    assert all(r["tags"] == [r["role"]] for p in role_plays for r in p["roles"])


def test_the_baseline_is_read_by_the_common_probe_only_when_deploy_asks_and_as_facts_yml_reads_it() -> None:
    """No facts play at the end of site.yml: the common role's probe reads the baseline document
    (racfg_read_host_facts), the same one facts.yml reads after a run that changed something."""
    plays = yaml.safe_load((REPO / "playbooks/site.yml").read_text())
    assert not any("facts.yml" in str(p.get("ansible.builtin.import_playbook")) for p in plays)
    probe = yaml.safe_load((REPO / "roles/common/tasks/probe.yml").read_text())[0]["racfg_probe"]
    assert probe["host_facts"] == "{{ racfg_baseline_read if racfg_read_host_facts | default(false) | bool else {} }}"
    facts = yaml.safe_load((REPO / "playbooks/facts.yml").read_text())[0]["tasks"][0]["racfg_probe"]
    assert facts == {"host_facts": "{{ racfg_baseline_read }}"}
    spec = yaml.safe_load((REPO / "playbooks/group_vars/all.yml").read_text())["racfg_baseline_read"]
    assert set(spec) == {"nics", "drives", "identity"}


def test_every_role_tag_is_listed(tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    cluster: {children: {dgx: {}, storage: {}}}\n    switches: {}\n")
    out = subprocess.run([str(REPO / ".venv/bin/ansible-playbook"), "-i", str(inventory), "--list-tags",
                          "playbooks/site.yml"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    tags = set()
    for line in out.splitlines():
        if "TASK TAGS:" in line:
            tags |= {t.strip() for t in line.split("[", 1)[1].rstrip("]").split(",") if t.strip()}
    assert set(ROLES) | {"switch"} <= tags, tags


def test_every_role_has_the_galaxy_layout_and_documents_its_defaults() -> None:
    for role in ROLES:
        base = REPO / "roles" / role
        for part in ("defaults/main.yml", "tasks/main.yml", "handlers/main.yml", "meta/main.yml"):
            assert (base / part).is_file(), f"{role}: {part} missing"
        meta = yaml.safe_load((base / "meta/main.yml").read_text())["galaxy_info"]
        platforms = {p["name"]: set(p["versions"]) for p in meta["platforms"]}
        assert platforms == {"Debian": {"bookworm"}, "Ubuntu": {"xenial", "focal", "jammy"}}
        text = (base / "defaults/main.yml").read_text()
        defaults = yaml.safe_load(text) or {}
        lines = text.splitlines()
        for key in defaults:
            idx = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
            assert (idx > 0 and lines[idx - 1].lstrip().startswith("#")) or "#" in lines[idx], \
                f"{role}: default {key} has no comment"
