"""The installers' check on the host, without a lab: common's ``installer.yml`` (which the ofed and weka
roles include to put a MLNX_OFED or Weka tarball on a host) run by ansible-playbook on this machine, with
a file on the "controller" (copied) and a real HTTP server on the loopback (downloaded).

The right sha256 puts the file in place; a wrong one fails naming the expected and the actual digest and
leaves nothing behind (the directory it created is removed, a directory that was there keeps everything
else), as does a failed download; plain http without the opt-in, or no digest, is refused before
anything is put on the host; under --check it says what it would check and puts nothing there. (The lab
tests run the same tasks through the roles on lab hosts: tests/roles/test_ofed_lab.py,
test_ofed_url_lab.py.)
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CONTENT = b"a stand-in installer tarball\n"
RIGHT = hashlib.sha256(CONTENT).hexdigest()
WRONG = hashlib.sha256(b"what the site vouched for\n").hexdigest()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # the test reads outcomes, not the access log
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An HTTP server on the loopback serving CONTENT as /dist/installer.tgz; its base URL."""
    root = tmp_path_factory.mktemp("www")
    (root / "dist").mkdir()
    (root / "dist" / "installer.tgz").write_bytes(CONTENT)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


INSTALLER = {"ansible.builtin.include_role": {"name": "common", "tasks_from": "installer.yml"}}


def run(tmp_path: Path, cases: dict[str, dict[str, Any]], *args: str, task: dict[str, Any] = INSTALLER
        ) -> dict[str, str]:
    """``task`` (installer.yml) once per case (its variables), in one play on this machine: each case's
    outcome, "passed" or the message it failed with, and the play's output under "output"."""
    blocks = [{"name": f"case {name}", "vars": {**variables, "case_name": name},
               "block": [task,
                         {"ansible.builtin.set_fact": {"outcomes": "{{ outcomes | combine({case_name: 'passed'}) }}"}}],
               "rescue": [{"ansible.builtin.set_fact": {
                   "outcomes": "{{ outcomes | combine({case_name: ansible_failed_result.msg}) }}"}}]}
              for name, variables in cases.items()]
    report = {"ansible.builtin.copy": {"content": "{{ outcomes | to_json }}", "dest": str(tmp_path / "outcomes.json"),
                                       "mode": "0644"}, "check_mode": False}
    play = [{"hosts": "localhost", "gather_facts": False, "vars": {"outcomes": {}}, "tasks": [*blocks, report]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml"), *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={"ANSIBLE_NOCOLOR": "1", "HOME": str(tmp_path), "ANSIBLE_ROLES_PATH": str(REPO / "roles"),
                               "PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return {**json.loads((tmp_path / "outcomes.json").read_text()), "output": proc.stdout}


def case(src: str, sha256: str | None, dest: Path, allow_http: bool = False) -> dict[str, Any]:
    return {"common_installer_for": "Weka", "common_installer_src": src, "common_installer_sha256": sha256,
            "common_installer_dest": str(dest), "common_installer_allow_http": allow_http}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_right_digest_installs_a_wrong_one_is_refused_naming_both_and_leaves_nothing(tmp_path: Path,
                                                                                        served: str) -> None:
    controller = tmp_path / "controller" / "installer.tgz"
    controller.parent.mkdir()
    controller.write_bytes(CONTENT)
    host = tmp_path / "host"
    (host / "kept").mkdir(parents=True)
    (host / "kept" / "earlier-run.txt").write_text("an earlier run's file\n")
    url = f"{served}/dist/installer.tgz"
    outcomes = run(tmp_path, {
        "copied": case(str(controller), RIGHT.upper(), host / "copied" / "installer.tgz"),
        "downloaded": case(url, RIGHT, host / "downloaded" / "installer.tgz", allow_http=True),
        "copied_wrong": case(str(controller), WRONG, host / "copied_wrong" / "installer.tgz"),
        "downloaded_wrong": case(url, WRONG, host / "kept" / "installer.tgz", allow_http=True),
        "http_without_opt_in": case(url, RIGHT, host / "no_opt_in" / "installer.tgz"),
        "no_digest": case(str(controller), None, host / "no_digest" / "installer.tgz"),
        "not_found": case(f"{served}/dist/other.tgz", RIGHT, host / "not_found" / "installer.tgz", allow_http=True),
    })
    assert outcomes["copied"] == "passed" and outcomes["downloaded"] == "passed", outcomes["output"][-3000:]
    assert (host / "copied" / "installer.tgz").read_bytes() == CONTENT
    assert (host / "downloaded" / "installer.tgz").read_bytes() == CONTENT

    wrongs = (("copied_wrong", controller, host / "copied_wrong"), ("downloaded_wrong", url, host / "kept"))
    for name, src, dest in wrongs:
        assert flat(outcomes[name]) == (
            f"Weka: sha256 Expected: {WRONG} Actual: {RIGHT}; refused: nothing was unpacked or run, what this run "
            f"put on the host was removed (from {src}, checked at {dest}/installer.tgz)"), outcomes[name]
    assert not (host / "copied_wrong").exists()  # the directory this run created, gone with the file
    assert sorted(p.name for p in (host / "kept").iterdir()) == ["earlier-run.txt"]  # only what it put there removed

    assert flat(outcomes["http_without_opt_in"]) == (
        f"Weka {url} refused before anything was put on the host: plain http needs allow_http: true on that source")
    assert flat(outcomes["no_digest"]) == (
        f"Weka {controller} refused before anything was put on the host: no sha256 to check it by "
        "(64 hexadecimal digits in the inventory)")
    assert not (host / "no_opt_in").exists() and not (host / "no_digest").exists()
    assert flat(outcomes["not_found"]).startswith(f"Weka {served}/dist/other.tgz could not be put on the host: ")
    assert "HTTP Error 404" in outcomes["not_found"] and not (host / "not_found").exists()


def test_check_mode_says_what_it_would_check_and_puts_nothing_there(tmp_path: Path, served: str) -> None:
    dest = tmp_path / "host" / "installer.tgz"
    outcomes = run(tmp_path, {"check": case(f"{served}/dist/installer.tgz", RIGHT, dest, allow_http=True)}, "--check")
    assert outcomes["check"] == "passed", outcomes["output"][-3000:]
    assert (f"would put {served}/dist/installer.tgz at {dest} and check there that its sha256 is {RIGHT} "
            "before unpacking or running anything") in flat(outcomes["output"])
    assert not dest.parent.exists()


def test_the_ofed_role_refuses_a_source_it_cannot_check_even_where_the_schema_was_bypassed(tmp_path: Path) -> None:
    """racfg_ofed given by hand (not rendered from a checked inventory): the role's first tasks refuse a
    directory, a repository without its signing key and plain http without the opt-in, before the
    host reads anything from the source."""
    tasks = yaml.safe_load((REPO / "roles/ofed/tasks/mlnx_install.yml").read_text())
    names = [t["name"] for t in tasks]
    first = tasks[:names.index(next(n for n in names if n.startswith("Refuse a source that cannot be checked"))) + 1]
    (tmp_path / "first.yml").write_text(yaml.safe_dump(first, sort_keys=False))
    pinned = {"flavor": "mlnx", "version": "9.9-1.0.0.0", "sha256": RIGHT, "allow_http": False, "signed_by": None}
    assert len(first) == 3  # the inventory's check, the classification, the refusal: nothing read yet
    url = "http://mirror.example/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz"
    outcomes = run(tmp_path, {name: {**case, "ofed_installed_version": ""} for name, case in {
        "tarball": {"racfg_ofed": {**pinned, "source": "/srv/mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz"}},
        "directory": {"racfg_ofed": {**pinned, "source": "/srv/mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64"}},
        "unsigned_repo": {"racfg_ofed": {**pinned, "source": "https://mirror.example/mlnx/", "sha256": None}},
        "http": {"racfg_ofed": {**pinned, "source": url}},
        "http_opted_in": {"racfg_ofed": {**pinned, "source": url, "allow_http": True}},
    }.items()}, task={"ansible.builtin.include_tasks": str(tmp_path / "first.yml")})
    assert outcomes["tarball"] == outcomes["http_opted_in"] == "passed", outcomes["output"][-3000:]
    refused = "MLNX_OFED source {} refused before any change: "
    assert flat(outcomes["directory"]) == refused.format("/srv/mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64") + (
        "a directory cannot be checked by a sha256: give the .tgz as downloaded, with its sha256")
    assert flat(outcomes["unsigned_repo"]) == refused.format("https://mirror.example/mlnx/") + (
        "an apt repository is added only with its signing key (software.ofed.signed_by), never trusted=yes")
    assert flat(outcomes["http"]) == refused.format(url) + "plain http needs allow_http: true on that source"
