"""Ansible callback ``template_cache``: a template compiled once per run, not once per worker.

Why: Ansible compiles every Jinja expression it renders (task arguments, and each variable they
reference) in the worker it forks for one host and one task, and the worker ends with the task:
nothing it compiled outlives it. The roles' reads render the same expressions on every host (a
role's derived variables, its verdict, the probe's wanted files), so a read pass compiled each of
them once per host: compiling was most of the controller's work in a deploy's read pass and in
drift (bench/RESULTS.md). With this plugin the first worker to compile an expression keeps the
compiled code in the run's own temporary directory (``DEFAULT_LOCAL_TMP``, which Ansible makes for
each run, readable by its user only, and removes at its end), and the others load it.

The code is keyed by everything its compilation reads: the template text, the environment's class
and syntax settings (an expression's ``#jinja2:`` overrides give it an environment of its own) and
whether backslashes are escaped (a YAML-sourced expression's); Ansible's configuration and its
plugins are those of the run, as the directory is. Compiling is otherwise Ansible's and Jinja's
own: a template that does not compile is never stored, and Ansible reports its error as before.

It is a callback only because that is the one kind of plugin Ansible loads into the controller
process before it forks any worker (as ``fork_gc``); it reports nothing. ansible.cfg enables it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
import types
from pathlib import Path
from typing import Any

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: template_cache
type: aggregate
short_description: Compile each Jinja template once per run, across Ansible's workers
description:
  - Keeps the code of each template a worker compiles in the run's temporary directory, for the
    other workers of the run to load instead of compiling it again.
requirements:
  - Enable it in ansible.cfg (callbacks_enabled = template_cache).
"""

# The environment's settings that its lexer, parser and code generator read.
SYNTAX = ("block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
          "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
          "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized",
          "is_async")

_installed: Path | None = None


def cache_key(environment: Any, source: str, escape_backslashes: bool) -> str:
    """What the compiled code of ``source`` depends on besides the run (see the module's docstring)."""
    settings = [type(environment).__qualname__, getattr(environment.code_generator_class, "__qualname__", ""),
                repr(environment.autoescape), repr(sorted(environment.extensions)), repr(escape_backslashes),
                *(repr(getattr(environment, name, None)) for name in SYNTAX)]
    digest = hashlib.sha256("\0".join(settings).encode())
    digest.update(b"\0" + str(source).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def load(path: Path) -> types.CodeType | None:
    try:
        code = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def store(path: Path, code: types.CodeType) -> None:
    """Write atomically (another worker may read it at once); code that cannot be kept is not."""
    try:
        data = marshal.dumps(code)
    except ValueError:
        return
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as out:
            out.write(data)
        os.replace(out.name, path)
    except OSError:
        return


def install(directory: Path) -> bool:
    """Route Ansible's template compilation through the cache in ``directory``, once per process;
    True when this call installed it."""
    global _installed
    if _installed is not None:
        return False
    try:  # ansible-core 2.19's template engine; before it, each worker compiles as it always did
        from ansible._internal._templating._jinja_bits import AnsibleEnvironment, _TemplateCompileContext
    except ImportError:
        return False
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:  # nowhere to keep them: compiled per worker, as without this plugin
        return False
    compile_uncached = AnsibleEnvironment.compile

    def compile_cached(self: Any, source: Any, name: str | None = None, filename: str | None = None,
                       raw: bool = False, defer_init: bool = False) -> Any:
        if (raw or defer_init or name is not None or filename is not None or not isinstance(source, str)
                or self._debuggable_template_source):
            return compile_uncached(self, source, name, filename, raw, defer_init)
        context = _TemplateCompileContext.current(optional=True)
        path = directory / cache_key(self, source, bool(context and context.escape_backslashes))
        code = load(path)
        if code is None:
            code = compile_uncached(self, source)
            store(path, code)
        return code

    AnsibleEnvironment.compile = compile_cached
    _installed = directory
    return True


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "template_cache"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display: Any = None) -> None:
        super().__init__(display)
        install(Path(C.DEFAULT_LOCAL_TMP) / "racfg-templates")
