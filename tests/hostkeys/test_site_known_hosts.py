"""``site.known_hosts``: one file the inventory names, read by every connection racfg makes in place
of the user's known_hosts (besides the system's and a provider's), relative to the inventory file."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from racfg.connection import ConnectionOverrides
from racfg.inventory import load_cluster
from racfg.render import connection_options, render_files
from racfg.render.unsafe import load_rendered
from racfg.ssh.host_sessions import SshEndpoint
from racfg.ssh.known_hosts import GLOBAL_FILES

REPO = Path(__file__).resolve().parents[2]


def test_the_site_file_is_relative_to_the_inventory_and_reaches_every_connection(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    data = yaml.safe_load((REPO / "inventory" / "lab.yaml").read_text())
    data["site"]["known_hosts"] = "keys/known_hosts"
    inventory = tmp_path / "site" / "lab.yaml"
    inventory.parent.mkdir()
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    cluster = load_cluster(inventory)
    site_file = tmp_path / "site" / "keys" / "known_hosts"
    assert cluster.known_hosts_file == site_file

    group_vars = load_rendered(render_files(cluster)["group_vars/all.yml"])
    assert group_vars["racfg_known_hosts"] == str(site_file)  # the switch role and validate read it
    lab = ConnectionOverrides(provider="lab", known_hosts=Path("/lab/known_hosts"))
    endpoint = SshEndpoint.of(cluster.hosts[0], lab)  # validate, smoke, the site lock
    assert endpoint.known_hosts.files() == [Path("/lab/known_hosts"), site_file, *GLOBAL_FILES]
    ssh_args = shlex.split(connection_options(lab, cluster.known_hosts_file)[-1])  # deploy's OpenSSH
    assert f"UserKnownHostsFile=/lab/known_hosts {site_file}" in ssh_args
    assert "StrictHostKeyChecking=yes" in ssh_args and "home" not in " ".join(ssh_args)


def test_without_a_site_file_the_users_files_are_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    assert cluster.known_hosts_file is None
    assert "racfg_known_hosts" not in load_rendered(render_files(cluster)["group_vars/all.yml"])
    files = SshEndpoint.of(cluster.hosts[0], ConnectionOverrides()).known_hosts.files()
    assert files[:2] == [tmp_path / "home" / ".ssh" / "known_hosts", tmp_path / "home" / ".ssh" / "known_hosts2"]


def test_deploy_says_how_to_see_and_record_a_key_openssh_refused():
    """Under deploy OpenSSH checks the hosts' keys: its refusal gets racfg's hint (the command that
    shows the fingerprint and the one that records a checked key); another unreachable host does not."""
    from racfg.playbook import PlaybookTracker

    def unreachable(host: str, msg: str) -> dict[str, object]:
        return {"event": "runner_on_unreachable", "event_data": {"host": host, "task": "Gathering Facts",
                                                                 "res": {"msg": msg, "unreachable": True}}}

    tracker = PlaybookTracker()
    tracker.handle(unreachable("dgx01", "Failed to connect to the host via ssh: Host key verification failed."))
    tracker.handle(unreachable("dgx02", "Failed to connect to the host via ssh: @@@@@@@@@@@@@@@@@@@@@@@\r\n"
                                        "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\n..."))
    tracker.handle(unreachable("dgx03", "Failed to connect to the host via ssh: connect to host 10.0.0.3 port 22: "
                                        "Connection timed out"))
    [one], [two], [three] = (tracker.hosts[h].problems for h in ("dgx01", "dgx02", "dgx03"))
    assert "Host key verification failed" in one and "`racfg hostkey show INVENTORY`" in one
    assert "racfg hostkey accept" in two
    assert "hostkey" not in three
