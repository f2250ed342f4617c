"""Ansible callback ``fork_gc``: each worker Ansible forks leaves the heap it inherits out of its
garbage collections.

Why: ansible-playbook forks a worker for every host and task. The worker inherits the controller
process's whole heap (inventory, variables, the parsed plays, and under ansible-runner its event
callback's state), and every full collection it makes walks all of those objects and writes to
their headers, which also copies each page it touches (copy-on-write). None of them can become
garbage in a worker that lives for one task. ``gc.freeze()`` right after the fork (what the Python
documentation advises for pre-forking servers) moves them out of the worker's collections; what
the worker allocates itself is collected as before, and the controller process is not touched.
It is a callback only because that is the one kind of plugin Ansible loads into the controller
process before it forks any worker: it reports nothing. ansible.cfg enables it (callbacks_enabled)
for racfg's runs and for a plain ``ansible-playbook`` alike; Ansible finds it beside the playbooks.
"""

from __future__ import annotations

import gc
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: fork_gc
type: aggregate
short_description: Freeze the inherited heap in each forked Ansible worker
description:
  - Registers gc.freeze as an after-fork hook in the controller process, so that the garbage
    collector of each worker leaves the objects it inherited alone.
requirements:
  - Enable it in ansible.cfg (callbacks_enabled = fork_gc).
"""

_registered = False


def register() -> bool:
    """Register the hook once per process (a hook cannot be removed, and a second would only repeat
    the freeze); True when this call registered it."""
    global _registered
    if _registered:
        return False
    os.register_at_fork(after_in_child=gc.freeze)
    _registered = True
    return True


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fork_gc"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None) -> None:
        super().__init__(display)
        register()
