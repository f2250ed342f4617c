"""No secret in a run's record or its processes' environment, and records only their owner reads
(issue 51): the environment a run gets (racfg.secret_env, the runner's configuration), a real
ansible-runner run on the controller with secrets in its caller's environment and in the private
extra-vars file, modules pipelined (their arguments never in a file), and the modes of the state
directory and its records (racfg.paths.private_dir, private_files, the CLI's recording commands).
The lab tests grep every file of real deploys, validates, drifts and smokes (tests/secretscan.py)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from racfg.errors import CannotRunError
from racfg.paths import private_dir, private_files
from racfg.secret_env import holds_secret, password_variables, without_secrets

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("name", "secret"), [
    ("RACFG_SW1_PASSWORD", True), ("OS_PASSWORD", True), ("MYSQL_PWD", False), ("VAULT_PASS", True),
    ("GITHUB_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True), ("AZURE_CLIENT_SECRET", True), ("API_KEY", True),
    ("SSH_PRIVATE_KEY", True), ("GOOGLE_APPLICATION_CREDENTIALS", True), ("db_passphrase", True),
    ("ANSIBLE_VAULT_PASSWORD_FILE", False), ("ANSIBLE_BECOME_PASSWORD_FILE", False), ("SSH_AUTH_SOCK", False),
    ("GIT_ASKPASS", False), ("PASSAGE_DIR", False), ("ANSIBLE_HOST_KEY_CHECKING", False), ("PATH", False),
    ("HOME", False), ("RACFG_STATE_DIR", False), ("KEYBOARD", False), ("COMPASS", False),
])
def test_a_variable_holds_a_secret_by_its_name(name: str, secret: bool) -> None:
    """Named like a secret unless the name says it holds where one is (a file, a socket, a directory)."""
    assert holds_secret(name) is secret


def test_the_inventory_s_password_variables_are_withheld_whatever_their_names() -> None:
    from racfg.inventory import load_cluster

    env = {"PATH": "/usr/bin", "SWPW": "x", "RACFG_LEAFSPINE_PASSWORD": "y", "HOME": "/root", "GH_TOKEN": "z"}
    cluster = load_cluster(REPO / "inventory" / "ra-leafspine.yaml")
    names = password_variables(cluster)
    assert names == {"RACFG_LEAFSPINE_PASSWORD"}
    assert without_secrets(env, names | {"SWPW"}) == {"PATH": "/usr/bin", "HOME": "/root"}
    assert password_variables(load_cluster(REPO / "inventory" / "lab.yaml")) == frozenset()  # lab: true


def test_the_task_count_s_ansible_playbook_gets_the_same_environment(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from racfg.playbook import Playbook

    monkeypatch.setenv("SWPW", "hunter2")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("RACFG_NOTE", "kept")
    env = Playbook("site.yml", tmp_path / "hosts.yml", tmp_path, withheld_env=frozenset({"SWPW"})).environment()
    assert env["RACFG_NOTE"] == "kept" and env["ANSIBLE_CONFIG"].endswith("ansible.cfg")
    assert "SWPW" not in env and "GITHUB_TOKEN" not in env


PLAY = """\
- hosts: all
  gather_facts: false
  tasks:
    - name: The environment a module gets
      ansible.builtin.command: env
    - name: Module files under remote_tmp while a module runs
      ansible.builtin.command: find {{ remote_tmp_dir }} -name "AnsiballZ_*"
    - name: The switch password reached the play
      ansible.builtin.set_fact:
        password_length: "{{ racfg_switch_passwords.here | length }}"
      no_log: true
    - name: Say its length
      ansible.builtin.debug:
        msg: "{{ password_length }}"
"""


def every_file(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def test_a_real_run_records_no_secret_and_hands_none_to_its_processes(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One ansible-runner run on the controller (local connection, no lab): a password variable the
    inventory names, a token of the operator's shell and the switch password of the private extra-vars
    file are nowhere in the record (the ``command`` dump, env/, events, stdout, Ansible's local temp);
    the play's processes get no secret variable but every other one; modules run pipelined, so none
    is written under remote_tmp; and the password did reach the play (its length)."""
    from racfg.playbook import Playbook, PlaybookTracker
    from racfg.secret_vars import SWITCH_PASSWORDS_VAR, secret_extravars

    secrets = {"SWPW": "env-secret-8bd1c0", "RACFG_SW9_PASSWORD": "env-secret-77f2e1",
               "GITHUB_TOKEN": "ghp_token-secret-41a9"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RACFG_NOTE", "kept-value")
    remote = tmp_path / "remote"
    remote.mkdir()
    monkeypatch.setenv("ANSIBLE_REMOTE_TMP", str(remote))
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here:\n      ansible_connection: local\n"
                                        "      ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n")
    (tmp_path / "play.yml").write_text(PLAY)
    switch_password = "switch-secret-5c03d7e2"
    record = tmp_path / "record"
    tracker = PlaybookTracker()
    with secret_extravars({SWITCH_PASSWORDS_VAR: {"here": switch_password}}) as secret_file:
        run = Playbook(str(tmp_path / "play.yml"), tmp_path / "hosts.yml", record, secret_vars=secret_file,
                       extravars={"remote_tmp_dir": str(remote)}, withheld_env=frozenset({"SWPW"}))
        assert run.run(tracker, threading.Event()) is False
    assert tracker.stats_seen and tracker.hosts["here"].failed == 0
    files = every_file(record)
    needles = [*secrets.values(), switch_password]
    assert files and not [(str(p), n) for p, data in files.items() for n in needles if n.encode() in data]
    results = {e["event_data"]["task"]: e["event_data"]["res"] for e in
               (json.loads(data) for p, data in files.items() if "job_events" in p.parts)
               if e["event"] == "runner_on_ok"}
    environment = dict(line.split("=", 1) for line in results["The environment a module gets"]["stdout_lines"]
                       if "=" in line)
    assert environment["RACFG_NOTE"] == "kept-value" and not set(secrets) & set(environment)
    assert results["Module files under remote_tmp while a module runs"]["stdout"] == ""
    assert str(results["Say its length"]["msg"]) == str(len(switch_password))
    command = json.loads((record / "artifacts" / "ansible" / "command").read_text())
    assert command["env"]["RACFG_NOTE"] == "kept-value" and not set(secrets) & set(command["env"])
    assert f"@{secret_file}" in command["command"]  # only the (now deleted) file's path is recorded
    assert not secret_file.exists()


# --- modes -----------------------------------------------------------------------------------------

def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_private_directory_is_made_0700_and_an_open_one_of_this_user_is_tightened(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "a" / "state")
    assert mode(made) == 0o700
    (made / "old").write_text("kept")
    made.chmod(0o755)
    assert private_dir(made) == made and mode(made) == 0o700 and (made / "old").read_text() == "kept"


def test_a_private_directory_of_another_user_or_not_a_directory_is_refused(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)  # nobody's
    else:
        monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    with pytest.raises(CannotRunError, match=r"belongs to uid \d+, not to this user") as refused:
        private_dir(theirs, "point RACFG_STATE_DIR elsewhere")
    assert "RACFG_STATE_DIR" in str(refused.value) and mode(theirs) == 0o755  # refused, left as it was
    monkeypatch.undo()
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a-dir-of-mine", target_is_directory=True)
    (tmp_path / "a-dir-of-mine").mkdir()
    for path in (tmp_path / "file", tmp_path / "link"):
        with pytest.raises((CannotRunError, FileExistsError)):
            private_dir(path)


def test_a_record_and_the_state_directory_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made 0700 (the state directory tightened when an older racfg left it open), the record 0700 and
    its JSON 0600, whatever the umask."""
    from racfg.run_record import RunRecord

    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    monkeypatch.setenv("RACFG_STATE_DIR", str(state))
    previous = os.umask(0o022)
    try:
        record = RunRecord.create("deploy")
        written = record.write_json("results.json", {"ok": True})
    finally:
        os.umask(previous)
    assert [mode(p) for p in (state, state / "runs", record.path, written)] == [0o700, 0o700, 0o700, 0o600]


def test_private_files_makes_files_0600_and_directories_0700_for_the_block(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        with private_files():
            (tmp_path / "d").mkdir()
            (tmp_path / "d" / "f").write_text("x")
        (tmp_path / "after").write_text("x")
    finally:
        os.umask(previous)
    assert (mode(tmp_path / "d"), mode(tmp_path / "d" / "f"), mode(tmp_path / "after")) == (0o700, 0o600, 0o644)


def test_a_recording_command_writes_privately_and_check_does_not(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The racfg CLI in this process: `deploy` runs with umask 077 (everything it and its children
    write: records, reports, Ansible's temp files), `check` (which writes no record) with the user's."""
    from typer.testing import CliRunner

    from racfg.cli import app, deploy_cmd
    from racfg.connection import NO_OVERRIDES

    seen: list[int] = []

    def run_deploy(*_args: object, **_kwargs: object) -> None:
        seen.append(os.umask(0o077))
        (tmp_path / "written").write_text("x")
        raise CannotRunError("stopped by the test")

    monkeypatch.setattr(deploy_cmd, "run_deploy", run_deploy)
    monkeypatch.setattr(deploy_cmd, "overrides_for", lambda _cluster: NO_OVERRIDES)
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    previous = os.umask(0o022)
    try:
        result = CliRunner().invoke(app, ["deploy", str(REPO / "inventory" / "lab.yaml"), "--yes"])
        after = os.umask(0o022)
        check = CliRunner().invoke(app, ["check", str(REPO / "inventory" / "lab.yaml")])
        during_check = os.umask(0o022)
    finally:
        os.umask(previous)
    assert seen == [0o077] and mode(tmp_path / "written") == 0o600, result.output
    assert after == 0o022 and during_check == 0o022 and check.exit_code == 0, check.output


# --- the lab tests' scan (tests/secretscan.py) finds what it looks for --------------------------------

def test_the_secret_scan_finds_a_secret_anywhere_in_a_file_and_in_a_process_s_argv(tmp_path: Path) -> None:
    """Across a chunk boundary, after a sparse file's hole, not in the files it is told to skip; files
    readable by others named; and a process started with a secret in its argv caught while it runs."""
    import subprocess
    import sys

    import secretscan

    needle, other = b"scan-secret-2b7c9d41", b"scan-secret-other-77"
    (tmp_path / "straddle").write_bytes(b"a" * (secretscan.CHUNK - 5) + needle + b"b" * 10)
    with (tmp_path / "sparse.img").open("wb") as handle:
        handle.seek(64 << 20)
        handle.write(b"x" + other + b"x")
    (tmp_path / "skipped").write_bytes(needle)
    (tmp_path / "clean").write_bytes(b"nothing")
    for name in ("straddle", "sparse.img", "skipped"):
        (tmp_path / name).chmod(0o600)
    (tmp_path / "clean").chmod(0o644)
    scan = secretscan.Scan()
    secrets = [secretscan.Secret("one", needle), secretscan.Secret("two", other)]
    scan.look(tmp_path, secrets, {tmp_path / "skipped"})
    scan.modes(tmp_path)
    assert sorted(scan.findings) == [f"{tmp_path / 'sparse.img'}: two", f"{tmp_path / 'straddle'}: one"]
    assert scan.files == 3 and scan.bytes < secretscan.CHUNK + (1 << 20)  # the 64 MiB hole was not read
    assert scan.loose == [f"{tmp_path / 'clean'}: 644"]
    sampler = secretscan.ArgvSampler(secrets)
    with sampler.running():
        subprocess.run([sys.executable, "-c", "import time; time.sleep(0.5)", needle.decode()], check=True)
    assert sampler.samples >= 2 and any(f.endswith(": one") for f in sampler.findings), sampler.findings


def test_the_secrets_of_a_racfg_killed_outright_are_removed_by_the_next_and_a_live_one_s_kept() -> None:
    """SIGKILL runs no cleanup: the killed racfg's extra-vars file stays in /dev/shm until the next racfg
    hands a run its secrets, which removes it; the file of a racfg still running is left alone."""
    import signal
    import subprocess
    import sys

    from racfg.secret_vars import secret_extravars

    holder = ("import time\nfrom racfg.secret_vars import secret_extravars\n"
              "with secret_extravars({'racfg_switch_passwords': {'sw1': 'killed-secret'}}) as path:\n"
              "    print(path, flush=True)\n    time.sleep(120)\n")
    killed = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, cwd=REPO)
    live = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        orphan, kept = Path(killed.stdout.readline().strip()), Path(live.stdout.readline().strip())
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert orphan.is_file() and kept.is_file()  # nothing ran in the killed process
        with secret_extravars({"racfg_switch_passwords": {"sw1": "next"}}) as mine:
            assert mine is not None and mine.is_file()
            assert not orphan.parent.exists() and kept.is_file()
    finally:
        for process in (killed, live):
            process.kill()
            process.wait(timeout=30)
    from racfg.secret_vars import remove_orphans  # the live one, killed above too, is an orphan now

    assert kept.parent in remove_orphans(kept.parent.parent) and not kept.parent.exists()
