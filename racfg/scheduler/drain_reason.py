"""racfg's drain reason: the prefix that marks a drain as racfg's, the problem id and the short fix.

Why a prefix: gate resumes only the nodes it drained itself, and Slurm keeps no owner of a drain
but the reason text (and the user, root for both racfg and an operator). A reason that starts with
``racfg:`` is gate's; one that starts with ``racfg-check:`` is the node check's (the program deploy
installs as Slurm's HealthCheckProgram, racfg.render.node_check), which resumes only its own. Both are
racfg's to gate: a node the check drained is kept drained with gate's reason while racfg still finds
its problem, and resumed once racfg finds none, so the two never hold a node against each other. Any
other reason is someone else's and neither ever changes it.

Why a length and a character set: the reason reaches a remote shell and slurmctld's state, and
its parts (problem ids, fixes) come from the inventory's names and the tools' output. Slurm 22.05
has no limit of its own (slurmctld keeps the reason as given: 1,000 characters read back whole in
the lab), but ``sinfo -R`` shows the first 20 characters and ``scontrol show node`` one line:
racfg keeps its reason to ``REASON_MAX`` characters, the problem id first, and only
letters, digits and ``_ . : / , + ( ) [ ] @ # % -`` (anything else becomes a blank, and ``=``,
which would read as a new field of ``scontrol show node -o``, too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from racfg.render.node_check import REASON_PREFIX

PREFIX = "racfg:"
CHECK_PREFIX = REASON_PREFIX  # the node check's drains: its prefix lives with the data racfg renders for it
REASON_MAX = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/,+()\[\]@#%\- ]+")
_ELLIPSIS = "..."


def safe_text(text: str) -> str:
    """``text`` in the reason's character set, blanks collapsed."""
    return " ".join(_UNSAFE.sub(" ", text).split())


def is_racfg_reason(reason: str | None) -> bool:
    return bool(reason) and str(reason).startswith((PREFIX, CHECK_PREFIX))


def drain_reason(problem_ids: Sequence[str], fix: str | None, limit: int = REASON_MAX) -> str:
    """``racfg: host_mtu:dgx01:data0 fix: racfg deploy lab.yaml --limit dgx01``; more problems
    read ``racfg: ID +2 more fix: ...`` (the first problem's fix). Cut to ``limit`` characters:
    the fix first (ending in ``...``), then the id."""
    if not problem_ids:
        raise ValueError("a drain reason names at least one problem")
    head = f"{PREFIX} {safe_text(problem_ids[0])}"
    if len(problem_ids) > 1:
        head += f" +{len(problem_ids) - 1} more"
    if len(head) > limit:
        return head[:limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS
    tail = f" fix: {safe_text(fix)}" if fix and safe_text(fix) else ""
    if len(head) + len(tail) > limit:
        room = limit - len(head) - len(_ELLIPSIS)
        tail = tail[:room].rstrip() + _ELLIPSIS if room > len(" fix: x") else ""
    return head + tail
