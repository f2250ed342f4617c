"""Inventory values are data, never code: what no string of an inventory may hold, checked once on
the loaded tree, so every field (and every field added later, and every key) is covered.

racfg writes inventory values into files other programs read line by line (/etc/hosts, chrony.conf,
sysctl.d, netplan, a switch's CLI) and hands them to Ansible, whose variables are Jinja templates.
A newline in a value adds a line to such a file; ``{{ lookup('pipe', ...) }}`` in a value would
run on the controller when Ansible reads the variable. So, in every key and every string value:
no control character (C0, DEL, C1, the Unicode line and paragraph separators, the bidirectional
overrides that make a text read differently than it is), and no Jinja markers (``{{``, ``{%``,
``{#``). What each field may hold beyond that is the schema's (racfg.inventory.model.text); the
rendered variables are also marked ``!unsafe`` (racfg.render.unsafe), so a value that got past
both still reaches Ansible as plain text.
"""

from __future__ import annotations

import re
from typing import Any

from racfg.inventory.source import Loc

_CONTROL = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_BAD = re.compile(f"[{_CONTROL}]|\\{{[{{%#]")
_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL byte"}

CONTROL_HINT = "one line of printable text; a folded block (>) ends in a newline, write >- or the value on one line"
TEMPLATE_HINT = "racfg fills in every value itself: remove the braces"


def what_is_wrong(text: str) -> tuple[str, str] | None:
    """Why ``text`` may not be an inventory string, and what is allowed; None when it may."""
    found = _BAD.search(text)
    if found is None:
        return None
    char = found.group()
    if char.startswith("{"):
        return f"holds '{char}': inventory values are data, never templates (Ansible would evaluate it)", TEMPLATE_HINT
    name = _NAMES.get(char, f"the control character U+{ord(char):04X}")
    return f"holds {name}", CONTROL_HINT


def refused_strings(root: Any) -> list[tuple[Loc, str, str]]:
    """Every key and string value of the loaded tree that may not be in an inventory:
    (its path, what is wrong, what is allowed). A value an alias repeats is read once, at its first place."""
    out: list[tuple[Loc, str, str]] = []
    seen: set[int] = set()
    stack: list[tuple[Any, Loc]] = [(root, ())]
    search = _BAD.search
    while stack:
        node, loc = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            out += _refused_keys(node, loc)
            pairs: Any = node.items()
        else:
            pairs = enumerate(node)
        for key, value in pairs:
            if isinstance(value, str):
                if search(value):
                    out.append(((*loc, key), *what_is_wrong(value)))  # type: ignore[misc]
            elif isinstance(value, (dict, list)):
                stack.append((value, (*loc, key)))
    return out


def _refused_keys(node: dict, loc: Loc) -> list[tuple[Loc, str, str]]:
    try:  # all keys at once (joined by a blank, keys cannot make a marker none of them holds)
        if not _BAD.search(" ".join(node)):
            return []
    except TypeError:  # a key that is not a string (a tree built in code, not loaded)
        pass
    out = []
    for key in node:
        if isinstance(key, str) and (wrong := what_is_wrong(key)):
            out.append(((*loc, key), f"key {wrong[0]}", wrong[1]))
    return out


__all__ = ["CONTROL_HINT", "TEMPLATE_HINT", "refused_strings", "what_is_wrong"]
