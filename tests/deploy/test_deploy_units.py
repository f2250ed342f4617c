"""Deploy's pieces that need no lab: scope, lock, preflight, baseline swap."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from racfg.baseline.store import commit_baseline, list_baselines, load_baseline, staging_dir
from racfg.deploy.deploy_run import DeployOptions, switches_in_scope
from racfg.deploy.preflight import ofed_source_problem
from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg.lock.local import site_lock
from racfg.render.unsafe import load_rendered

REPO = Path(__file__).resolve().parents[2]


def test_switch_scope_follows_limit_and_tags():
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    assert switches_in_scope(cluster, DeployOptions()) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(limit="dgx01")) == []
    assert switches_in_scope(cluster, DeployOptions(limit="dgx01,sw1")) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(limit="switches")) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(tags="fabric")) == []
    assert switches_in_scope(cluster, DeployOptions(skip_tags="switch")) == []


def _hold(directory: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    with site_lock(Path(directory), "lab", "deploy"):
        ready.set()
        time.sleep(5)


def test_second_holder_is_refused_with_pid(tmp_path):
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold, args=(str(tmp_path), ready))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(CannotRunError) as info, site_lock(tmp_path, "lab", "deploy"):
            pass
        assert f"pid {holder.pid}" in str(info.value) and "started" in str(info.value)
    finally:
        holder.terminate()
        holder.join()
    with site_lock(tmp_path, "lab", "deploy"):  # released when its holder died
        pass


def test_missing_ofed_source_is_named(tmp_path):
    inv = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(inv.replace("/srv/mlnx/MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64.tgz", "ofed.tgz"))
    problem = ofed_source_problem(load_cluster(path))
    assert problem is not None and "software.ofed.source" in problem and "does not exist" in problem
    (tmp_path / "ofed.tgz").write_bytes(b"")  # what it holds is the role's to refuse (release, sha256)
    assert ofed_source_problem(load_cluster(path)) is None


def test_baseline_swaps_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path))
    for version in ("1", "2"):
        staging = staging_dir("lab")
        (staging / "hosts" / "dgx01.json").write_text(json.dumps({"kernel": version}))
        commit_baseline("lab", staging, {"site": "lab"})
    baseline = load_baseline("lab")
    assert baseline is not None and baseline["hosts"]["dgx01"] == {"kernel": "2"}
    older = [b for b in list_baselines("lab") if not b["current"]]
    assert len(older) == 1
    assert load_baseline("lab", older[0]["id"])["hosts"]["dgx01"] == {"kernel": "1"}


def test_unset_password_variable_is_named_before_anything_runs(tmp_path, monkeypatch):
    from racfg.deploy.preflight import run_preflight
    from racfg.errors import UsageError

    monkeypatch.delenv("RACFG_SN2700_PASSWORD", raising=False)
    inv = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(inv.replace("flavor: mlnx", "flavor: inbox"))
    with pytest.raises(UsageError) as info:
        run_preflight(load_cluster(path), ["sn2700"])
    text = str(info.value)
    assert "switch sn2700: environment variable RACFG_SN2700_PASSWORD is not set" in text
    assert "site.yaml:" in text and "switches[0].credentials" in text
    monkeypatch.setenv("RACFG_SN2700_PASSWORD", "from-the-environment")
    run_preflight(load_cluster(path), ["sn2700"])


# --- the product does not lean on the lab (issue 11, point 8) ---------------------------------

PRODUCT_PACKAGES = ("racfg/switches", "racfg/deploy", "racfg/render", "racfg/playbook", "racfg/baseline")
PRODUCT_MODULES = ("racfg/connection.py", "racfg/secret_vars.py")


def _imports(path: Path) -> set[str]:
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_switches_deploy_render_never_import_the_lab():
    files = [p for d in PRODUCT_PACKAGES for p in sorted((REPO / d).rglob("*.py"))]
    files += [REPO / m for m in PRODUCT_MODULES]
    assert len(files) > 10
    leaning = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n == "racfg_lab" or
                                                n.startswith("racfg_lab."))
               for p in files}
    assert {k: v for k, v in leaning.items() if v} == {}
    # and at run time: loading deploy, the switch layer and render loads no lab code (the CLI
    # package does: it carries `racfg lab`, and racfg.cli.providers asks the lab for overrides)
    import subprocess
    import sys

    code = ("import sys, racfg.deploy.deploy_run, racfg.switches.apply, racfg.switches.credentials, racfg.render; "
            "print(sorted(m for m in sys.modules if m.startswith('racfg_lab')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


def test_the_provider_key_reaches_only_hosts_whose_inventory_names_none(tmp_path):
    """The lab's key and known_hosts reach ansible-playbook as options; Ansible ranks a host's own
    inventory key above them. Checked on the ssh command lines ansible-playbook itself runs
    (-vvv) against a closed local port: nothing is reached, each host's ssh options are shown."""
    import re
    import shlex
    import subprocess
    import sys

    from labsupport import operator_env

    from racfg.connection import NO_OVERRIDES, ConnectionOverrides
    from racfg.render import connection_options
    from racfg.ssh.known_hosts import KnownHosts

    # with no provider: no key, and strict checking on the user's and the system's known_hosts
    assert connection_options(NO_OVERRIDES) == ["--ssh-common-args", shlex.join(KnownHosts().openssh_options())]
    assert "StrictHostKeyChecking=yes" in KnownHosts().openssh_options()
    overrides = ConnectionOverrides(provider="lab", ssh_key=Path("/lab/id"), known_hosts=Path("/lab/known"))
    (tmp_path / "hosts.yml").write_text(
        "all:\n  vars:\n    ansible_port: 9\n  hosts:\n"
        "    own:\n      ansible_host: 127.0.0.2\n      ansible_ssh_private_key_file: /site/own_key\n"
        "    lab:\n      ansible_host: 127.0.0.3\n")
    (tmp_path / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n"
                                       "    - name: Reach\n      ansible.builtin.ping:\n")
    env = operator_env(ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_SSH_CONTROL_PATH_DIR=str(tmp_path / "cp"))
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    out = subprocess.run([playbook, "-vvv", "-i", str(tmp_path / "hosts.yml"), *connection_options(overrides),
                          str(tmp_path / "play.yml")], capture_output=True, text=True, env=env, timeout=120).stdout
    names = {"127.0.0.2": "own", "127.0.0.3": "lab"}  # -vvv names a host by its address
    ssh = {names[m[0]]: m[1] for m in re.findall(r"<(127\.0\.0\.[23])> SSH: EXEC (ssh .*)", out)}
    assert set(ssh) == {"own", "lab"}, out[-2000:]
    assert 'IdentityFile="/site/own_key"' in ssh["own"] and "/lab/id" not in ssh["own"]
    assert 'IdentityFile="/lab/id"' in ssh["lab"]
    assert all("UserKnownHostsFile=/lab/known" in line and "StrictHostKeyChecking=yes" in line for line in ssh.values())


def test_the_options_reach_ansible_runner_as_one_command_line(tmp_path):
    """ansible-runner splits its command line with shlex: the ssh options (one argument with spaces)
    must come back as the same arguments; a run without a provider adds nothing."""
    import shlex

    from racfg.connection import ConnectionOverrides
    from racfg.playbook import Playbook, Selection
    from racfg.render import connection_options

    overrides = ConnectionOverrides(provider="lab", ssh_key=Path("/lab/id"), known_hosts=Path("/lab/known"))
    run = Playbook("site.yml", tmp_path / "hosts.yml", tmp_path, selection=Selection(check=True),
                   connection_options=connection_options(overrides))
    assert shlex.split(run.cmdline()) == ["--check", *connection_options(overrides)]
    assert Playbook("site.yml", tmp_path / "hosts.yml", tmp_path).cmdline() == ""


def test_lab_true_takes_the_override_and_an_own_source_never_does(monkeypatch):
    from racfg.connection import ConnectionOverrides
    from racfg.switches import SwitchCredentialsError, resolve_password

    overrides = ConnectionOverrides(provider="lab", switch_passwords={"sw1": "generated"})
    assert resolve_password({"lab": True}, site="s", name="sw1", overrides=overrides) == "generated"
    monkeypatch.setenv("RACFG_TEST_SW1", "from-env")
    assert resolve_password({"password_env": "RACFG_TEST_SW1"}, site="s", name="sw1", overrides=overrides) == "from-env"
    monkeypatch.delenv("RACFG_TEST_SW1")
    with pytest.raises(SwitchCredentialsError, match="RACFG_TEST_SW1 is not set"):
        resolve_password({"password_env": "RACFG_TEST_SW1"}, site="s", name="sw1", overrides=overrides)
    with pytest.raises(SwitchCredentialsError, match="lab: true, but no running lab of site 's'"):
        resolve_password({"lab": True}, site="s", name="sw1")


def test_secret_extravars_file_is_private_and_gone_afterwards():
    import stat

    from racfg.secret_vars import secret_extravars

    with secret_extravars({"racfg_switch_passwords": {"sw1": "s3cret"}}) as path:
        assert path is not None and load_rendered(path.read_text()) == {"racfg_switch_passwords": {"sw1": "s3cret"}}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert "/runs/" not in str(path)
    assert not path.exists() and not path.parent.exists()
    with secret_extravars({}) as nothing:
        assert nothing is None


def test_a_password_that_looks_like_a_template_reaches_the_play_as_it_is(tmp_path):
    """Ansible templates what an extra-vars file holds: the secrets file writes every string
    ``!unsafe``, so a password with ``{{`` in it is passed on, never evaluated (a real ansible-playbook)."""
    import subprocess
    import sys

    from racfg.secret_vars import secret_extravars

    marker = tmp_path / "evaluated"
    password = "{{ lookup('pipe', 'touch " + str(marker) + "') }}x{% raw %}"
    play = tmp_path / "play.yml"
    play.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n"
                    "    - ansible.builtin.copy:\n        content: '{{ racfg_switch_passwords.sw1 }}'\n"
                    f"        dest: {tmp_path / 'seen'}\n        mode: '0600'\n")
    with secret_extravars({"racfg_switch_passwords": {"sw1": password}}) as path:
        done = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-c", "local", "-i",
                               "localhost,", "-e", f"@{path}", str(play)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "ANSIBLE_PYTHON_INTERPRETER": sys.executable})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "seen").read_text() == password and not marker.exists()


# --- Ctrl-C always stops a run (issue 11, point 9) -------------------------------------------

def test_signals_set_the_stop_event_wherever_they_land_and_handlers_come_back():
    import signal

    from racfg.lock.local import stop_on_signals
    from racfg.playbook import Playbook, PlaybookTracker

    before = signal.getsignal(signal.SIGINT)
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt: the event records it
        deadline = time.monotonic() + 5
        while not stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stop.is_set()
        # a run asked to stop before it starts never starts
        run = Playbook(playbook="site.yml", inventory=REPO / "nowhere.yml", record_dir=REPO / "nowhere")
        assert run.run(PlaybookTracker(), stop) is True
        assert not (REPO / "nowhere").exists()
    assert signal.getsignal(signal.SIGINT) is before


def test_gpus_are_required_in_production_and_lifted_only_for_a_lab_run():
    from racfg.connection import NO_OVERRIDES, ConnectionOverrides
    from racfg.deploy.deploy_run import provider_extravars
    from racfg.render import load_rendered, render_files

    files = render_files(load_cluster(REPO / "inventory" / "ra-ethernet.yaml"))
    assert load_rendered(files["host_vars/dgx01.yml"])["racfg_gpu_required"] is True
    assert load_rendered(files["host_vars/weka01.yml"])["racfg_gpu_required"] is False
    assert provider_extravars(NO_OVERRIDES) == {}
    lab = ConnectionOverrides(provider="lab", host_vars={"racfg_gpu_required": False})
    assert provider_extravars(lab) == {"racfg_gpu_required": False}
    lab = ConnectionOverrides(provider="lab", known_hosts=Path("/lab/known_hosts"))  # the switch role reads it
    assert provider_extravars(lab) == {"racfg_provider_known_hosts": "/lab/known_hosts"}
