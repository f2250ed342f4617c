"""bench/runner_alone.py: a real play through ansible-runner alone, on this machine (local
connection, no lab), ends with the recap's totals and ansible-playbook's exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def run_alone(tmp_path: Path, tasks: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here:\n      ansible_connection: local\n"
                                        "      ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n")
    (tmp_path / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n" + tasks)
    return subprocess.run([sys.executable, str(BENCH / "runner_alone.py"), str(tmp_path / "play.yml"),
                           str(tmp_path / "hosts.yml"), "-e", "word=changed"],
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_play_that_changes_one_thing_reports_it_with_exit_0(tmp_path):
    done = run_alone(tmp_path, "    - name: Change something\n      ansible.builtin.command: echo {{ word }}\n"
                               "    - name: Leave the rest\n      ansible.builtin.debug:\n        msg: ok\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "changed=1 failed=0 unreachable=0"


def test_a_failed_task_is_counted_and_the_exit_status_is_ansible_playbooks(tmp_path):
    done = run_alone(tmp_path, "    - name: Fail\n      ansible.builtin.command: \"false\"\n")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "changed=0 failed=1 unreachable=0"
