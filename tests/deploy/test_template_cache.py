"""playbooks/callback_plugins/template_cache.py: a template compiled once per run renders what
Ansible's own compilation renders, and the other workers of the run load it.

Real ansible-playbook runs on the controller itself (local connection, no lab), with and without
the plugin; its key and its store on tables.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("template_cache", ROOT / "playbooks" / "callback_plugins"
                                               / "template_cache.py")
assert _spec is not None and _spec.loader is not None
template_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(template_cache)

# Expressions as the roles write them: derived variables over other variables, filters, a loop
# building a list, a regex with backslashes (escaped as YAML-sourced text is), a lookup of a
# template file, and a template file with its own #jinja2: syntax over the same body.
PLAY = r"""
- hosts: all
  gather_facts: false
  vars:
    nics: [{name: data0, mtu: 9000}, {name: data1}]
    wanted: >-
      {%- set out = [] -%}
      {%- for nic in nics -%}
      {%- set _ = out.append(nic | combine({'mtu': nic.mtu | default(1500) | int})) -%}
      {%- endfor -%}
      {{ out }}
    capbnd: >-
      {{ ('CapBnd:  000001ffffffffff' | regex_search('CapBnd:\s*([0-9a-fA-F]+)', '\1') | first | int(base=16)) }}
  tasks:
    - name: Render
      ansible.builtin.debug:
        msg:
          wanted: "{{ wanted }}"
          capbnd: "{{ capbnd }}"
          names: "{{ wanted | map(attribute='name') | join(',') ~ '/' ~ inventory_hostname }}"
          plain: "{{ lookup('ansible.builtin.template', 'plain.j2') }}"
          own_syntax: "{{ lookup('ansible.builtin.template', 'own.j2') }}"
    - name: Count the kept templates
      ansible.builtin.debug:
        msg: "{{ 0 | kept_templates }}"
"""
BODY = "host [% inventory_hostname %] {{ inventory_hostname }}\n"
COUNTER = """
import os
from pathlib import Path
from ansible import constants as C


class FilterModule:
    def filters(self):
        def kept(_):
            where = Path(C.DEFAULT_LOCAL_TMP) / "racfg-templates"
            return len(os.listdir(where)) if where.is_dir() else -1
        return {"kept_templates": kept}
"""


def run_play(tmp_path: Path, callbacks: str) -> tuple[dict[str, dict], dict[str, int]]:
    """Each host's rendered message and its count of kept templates, with ``callbacks`` enabled."""
    from labsupport import operator_env

    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates" / "plain.j2").write_text(BODY)
    (tmp_path / "templates" / "own.j2").write_text("#jinja2: variable_start_string:'[%', variable_end_string:'%]'\n"
                                                   + BODY)
    (tmp_path / "filter_plugins").mkdir(exist_ok=True)
    (tmp_path / "filter_plugins" / "kept.py").write_text(COUNTER)
    env = operator_env(ANSIBLE_CALLBACKS_ENABLED=callbacks, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "h1,h2,h3,h4", "-c", "local",
                           "-e", f"ansible_python_interpreter={sys.executable}", "-f", "4",
                           str(tmp_path / "play.yml")], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"]
    rendered = {host: result["msg"] for host, result in tasks[0]["hosts"].items()}
    kept = {host: result["msg"] for host, result in tasks[1]["hosts"].items()}
    return rendered, kept


def test_a_run_renders_the_same_with_the_kept_templates_and_keeps_them(tmp_path: Path) -> None:
    with_cache, kept = run_play(tmp_path, "fork_gc,template_cache")
    without, none_kept = run_play(tmp_path, "fork_gc")
    assert with_cache == without
    assert with_cache["h2"]["names"] == "data0,data1/h2" and with_cache["h1"]["capbnd"] == 2199023255551
    assert with_cache["h3"]["wanted"] == [{"name": "data0", "mtu": 9000}, {"name": "data1", "mtu": 1500}]
    # the same body read with its own syntax and with the default one: each compiled for its own
    assert with_cache["h4"]["plain"] == "host [% inventory_hostname %] h4\n"
    assert with_cache["h4"]["own_syntax"] == "host h4 {{ inventory_hostname }}\n"
    assert all(count > 5 for count in kept.values()), kept  # the first task's templates, kept for the others
    assert set(none_kept.values()) == {-1}


class Syntax:
    """An environment's settings as cache_key reads them (jinja2's defaults)."""

    code_generator_class = object
    autoescape = False
    extensions: dict[str, object] = {}
    block_start_string, block_end_string = "{%", "%}"
    variable_start_string, variable_end_string = "{{", "}}"
    comment_start_string, comment_end_string = "{#", "#}"
    line_statement_prefix = line_comment_prefix = None
    trim_blocks = lstrip_blocks = keep_trailing_newline = is_async = False
    newline_sequence = "\n"
    optimized = True


class OwnSyntax(Syntax):
    variable_start_string, variable_end_string = "[%", "%]"


@pytest.mark.parametrize(("other", "same"), [
    ((Syntax(), "{{ a }}", False), True),
    ((Syntax(), "{{ b }}", False), False),  # another text
    ((Syntax(), "{{ a }}", True), False),  # backslashes escaped: another lexing
    ((OwnSyntax(), "{{ a }}", False), False),  # another syntax
])
def test_the_key_is_everything_the_compilation_reads(other: tuple, same: bool) -> None:
    assert (template_cache.cache_key(Syntax(), "{{ a }}", False) == template_cache.cache_key(*other)) is same


def test_kept_code_loads_back_and_what_cannot_be_kept_is_not(tmp_path: Path) -> None:
    code = compile("x = 1", "<template>", "exec")
    template_cache.store(tmp_path / "k", code)
    assert template_cache.load(tmp_path / "k") == code
    assert template_cache.load(tmp_path / "missing") is None
    (tmp_path / "torn").write_bytes(marshal.dumps(code)[:7])  # a write another worker has not finished
    assert template_cache.load(tmp_path / "torn") is None
    (tmp_path / "other").write_bytes(marshal.dumps({"not": "code"}))
    assert template_cache.load(tmp_path / "other") is None
    assert not [p for p in tmp_path.iterdir() if re.match(r"tmp", p.name)]  # no temporary file left


def test_a_template_that_does_not_compile_fails_as_ansible_fails_it(tmp_path: Path) -> None:
    """Nothing is kept of it, and the run says what Ansible says without the plugin."""
    from labsupport import operator_env

    (tmp_path / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Broken\n"
                                       "      ansible.builtin.debug:\n        msg: \"{{ 1 + }}\"\n")
    errors = []
    for callbacks in ("fork_gc,template_cache", "fork_gc"):
        proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "h1,h2", "-c", "local",
                               "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                              env=operator_env(ANSIBLE_CALLBACKS_ENABLED=callbacks), capture_output=True, text=True,
                              timeout=300, check=False)
        assert proc.returncode == 2, proc.stdout[-2000:]
        errors.append(sorted(line for line in proc.stdout.splitlines() if "fatal:" in line or "Syntax error" in line))
    assert errors[0] == errors[1] and errors[0], errors


def test_with_nowhere_to_keep_them_ansible_compiles_as_without_it(tmp_path: Path) -> None:
    from ansible._internal._templating._jinja_bits import AnsibleEnvironment

    before = AnsibleEnvironment.compile
    (tmp_path / "file").write_text("")
    assert template_cache.install(tmp_path / "file" / "racfg-templates") is False
    assert AnsibleEnvironment.compile is before
