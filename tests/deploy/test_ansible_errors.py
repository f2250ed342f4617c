"""Ansible's reason reaches the user: the error blocks ansible-core prints when it stops before or
outside a task, read from real output (tests/deploy/data/ansible_errors/core-2.18 and core-2.19:
ansible-playbook runs of a one-role playbook with each fault, recorded as they printed), the
tracker's verdict on a run without a recap, and a real facts run that fails writes no facts."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import yaml

from racfg.ansible_errors import AnsibleError, ansible_errors
from racfg.baseline.collect import read_host_facts
from racfg.baseline.store import staging_dir
from racfg.playbook import PlaybookTracker

DATA = Path(__file__).parent / "data" / "ansible_errors"
ROLE = "/tmp/h34/cases/w/roles/r"  # where the recorded runs' role was
VERSIONS = ("core-2.18", "core-2.19")


def errors_of(version: str, case: str) -> list[AnsibleError]:
    return ansible_errors((DATA / version / f"{case}.txt").read_text().splitlines())


@pytest.mark.parametrize("version", VERSIONS)
def test_unresolvable_module_gives_its_file_line_and_ansibles_words(version):
    [error] = errors_of(version, "unresolved_module")
    assert error.origin == f"{ROLE}/tasks/main.yml:1:3"
    assert error.message == ("couldn't resolve module/action 'ansible.posix.mountz'. This often indicates a "
                             "misspelling, missing collection, or incorrect module path.")
    assert error.text() == f"{ROLE}/tasks/main.yml:1:3: {error.message}"


@pytest.mark.parametrize(("version", "first_line"), [
    ("core-2.18", "Syntax Error while loading YAML."),
    ("core-2.19", "YAML parsing failed: While scanning a quoted scalar found unexpected end of stream."),
])
def test_yaml_syntax_error_in_a_role_names_the_line_the_parser_stopped_at(version, first_line):
    [error] = errors_of(version, "yaml_syntax")
    assert error.origin == f"{ROLE}/tasks/main.yml:5:1"
    assert error.message.splitlines()[0] == first_line
    assert "found unexpected end of stream" in error.message
    assert "JSON" not in error.message and "<unicode string>" not in error.message  # the parsers' noise


@pytest.mark.parametrize("version", VERSIONS)
def test_unreadable_vars_file_names_the_file(version):
    [error] = errors_of(version, "bad_vars_file")
    assert error.origin == f"{ROLE}/defaults/main.yml:2:2"
    assert "did not find expected ',' or ']'" in error.message


@pytest.mark.parametrize("version", VERSIONS)
def test_missing_role_names_the_play_line(version):
    [error] = errors_of(version, "role_not_found")
    assert error.origin == "/tmp/h34/cases/w/site2.yml:3:11"
    assert error.message.startswith("the role 'nosuchrole' was not found in /tmp/h34/cases/w/roles:")


@pytest.mark.parametrize("version", VERSIONS)
def test_missing_extra_vars_file_the_error_not_the_warnings_before_it(version):
    """Inventory plugins warn first (with their own "caused by"); only the [ERROR]/ERROR! block counts."""
    [error] = errors_of(version, "missing_extra_vars")
    assert error.origin is None
    assert error.message.splitlines()[0].startswith("Unable to retrieve file contents")
    assert "Could not find or access '/nonexistent/secret.yml' on the Ansible Controller." in error.message
    assert "Failed to parse inventory" not in error.message


def test_caused_by_keeps_the_underlying_reason_and_drops_excerpts():
    lines = ["[ERROR]: Task failed: Action failed.", "Origin: /r/tasks/main.yml:1:3", "",
             "1 - name: Look", "    ^ column 3", "", "<<< caused by >>>", "",
             "Module result deserialization failed.", "", "[WARNING]: something else"]
    [error] = ansible_errors(lines)
    assert error == AnsibleError("Task failed: Action failed.\ncaused by:\nModule result deserialization failed.",
                                 "/r/tasks/main.yml:1:3")
    assert error.text().splitlines() == ["/r/tasks/main.yml:1:3: Task failed: Action failed.", "  caused by:",
                                         "  Module result deserialization failed."]


def verbose(line: str) -> dict:
    return {"event": "verbose", "stdout": line}


def test_tracker_without_recap_reports_ansibles_error_and_with_a_recap_none():
    tracker = PlaybookTracker()
    for line in (DATA / "core-2.19" / "unresolved_module.txt").read_text().splitlines():
        tracker.handle(verbose(line))
    [error] = tracker.stop_reason()
    assert error.origin == f"{ROLE}/tasks/main.yml:1:3"
    tracker.handle({"event": "playbook_on_stats", "event_data": {"ok": {"h": 1}}})
    assert tracker.stop_reason() is None


def test_tracker_without_recap_or_error_says_so_with_the_last_lines():
    tracker = PlaybookTracker()
    tracker.handle(verbose("Traceback (most recent call last):"))
    tracker.handle(verbose("OSError: [Errno 2] No such file or directory: 'ansible-playbook'"))
    [error] = tracker.stop_reason()
    assert error.origin is None
    assert error.message.startswith("Ansible ended before its play recap and printed no error: Traceback")
    assert "No such file or directory: 'ansible-playbook'" in error.message


def test_a_facts_run_that_fails_writes_no_facts(tmp_path, monkeypatch):
    """playbooks/facts.yml for real on two hosts: this machine (local connection) reads its facts,
    the other is unreachable (a closed port). The run failed, so no host's facts reach the staging
    directory a baseline is committed from, not even the readable host's."""
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"cluster": {"hosts": {
        "here": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "racfg_nics": []},
        "gone": {"ansible_host": "127.0.0.1", "ansible_port": 9, "ansible_user": "root"},
    }}}}}))
    staging = staging_dir("factsorder")
    error = read_host_facts(inventory, ["--ssh-common-args", "-o ConnectTimeout=5 -o StrictHostKeyChecking=no"],
                            tmp_path / "record", staging, threading.Event(), forks=2)
    assert error is not None and error.startswith("host facts could not be read (gone: unreachable"), error
    assert list((staging / "hosts").iterdir()) == []
    # the same run on the readable host alone succeeds and writes its document: "here" was read above too
    assert read_host_facts(inventory, [], tmp_path / "record2", staging, threading.Event(), limit="here") is None
    assert [p.name for p in (staging / "hosts").iterdir()] == ["here.json"]
