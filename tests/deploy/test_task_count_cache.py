"""The progress bar's task total comes from the last run of the same play, not from a second
ansible-playbook (--list-tasks parses every role: about a CPU-second per deploy)."""

from __future__ import annotations

from pathlib import Path

from racfg.playbook import Playbook, Selection, count_tasks, remember_task_count
from racfg.playbook.task_count import task_count_key


def play(tmp_path: Path, tags: str | None = None) -> Playbook:
    inventory = tmp_path / "inventory" / "hosts.yml"
    inventory.parent.mkdir(exist_ok=True)
    if not inventory.exists():
        inventory.write_text("all:\n  hosts:\n    dgx01: {}\n")
    return Playbook("site.yml", inventory, tmp_path / "record", selection=Selection(tags=tags))


def test_a_remembered_count_is_used_for_the_same_play(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "task-counts.json"
    remember_task_count(play(tmp_path), cache, 87)
    assert count_tasks(play(tmp_path), cache) == 87


def test_another_selection_or_inventory_is_another_play(tmp_path: Path) -> None:
    base = task_count_key(play(tmp_path))
    assert task_count_key(play(tmp_path, tags="fabric")) != base
    (tmp_path / "inventory" / "host_vars").mkdir()
    (tmp_path / "inventory" / "host_vars" / "dgx01.yml").write_text("racfg_role: dgx\n")
    assert task_count_key(play(tmp_path)) != base
