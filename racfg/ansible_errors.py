"""Ansible's own reason when it stops before or outside a task, read from what it printed.

A parse error, a module it cannot resolve, a role it cannot find or a vars file it cannot read
end ansible-playbook before any task runs: no task result, no play recap, only an error block on
its output (ansible-runner hands it over as ``verbose`` events). Without it a user saw a recap of
zeros. This module turns that block into the file:line and message Ansible gave, in both forms
ansible-core writes it:

- 2.19: ``[ERROR]: message`` then ``Origin: FILE:LINE:COL``, a source excerpt, and perhaps
  ``<<< caused by >>>`` with the underlying message;
- 2.16 to 2.18: ``ERROR! message`` then ``The error appears to be in 'FILE': line L, column C``
  and ``The offending line appears to be:`` with an excerpt.

The excerpts stay in the run record's log (artifacts/ansible/stdout); the terminal gets the
location and the words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

STARTS = ("[ERROR]: ", "ERROR! ")
# Lines that begin another message: an error block ends there.
OTHER_MESSAGE = re.compile(r"^\[(WARNING|DEPRECATION WARNING|ERROR)\]|^ERROR! |^(PLAY|TASK|RUNNING HANDLER) \[")
ORIGIN_219 = re.compile(r"^Origin: (.+)$")
ORIGIN_218 = re.compile(r"^The error appears to be in '(.+)': line (\d+), column (\d+)")
EXCERPT_218 = "The offending line appears to be:"
CAUSED_BY = "<<< caused by >>>"
# ansible-core 2.16-2.18 open a YAML error with this line and the JSON parser's complaint: noise.
NOISE = (re.compile(r"^We were unable to read either as JSON nor YAML"), re.compile(r"^JSON: "),
         re.compile(r"^be elsewhere in the file depending on the exact syntax problem"),
         re.compile(r"^in \"<unicode string>\", line \d+"))
MAX_MESSAGE_LINES = 8


@dataclass(frozen=True)
class AnsibleError:
    """One error Ansible printed: its words, and where (FILE:LINE:COL) when it said."""

    message: str
    origin: str | None = None

    def text(self) -> str:
        """``FILE:LINE:COL: message`` (the message's further lines indented under it)."""
        head, *rest = self.message.splitlines() or [""]
        first = f"{self.origin}: {head}" if self.origin else head
        return "\n".join([first, *(f"  {line}" for line in rest)])

    def as_dict(self) -> dict[str, Any]:
        return {"origin": self.origin, "message": self.message}


def ansible_errors(lines: Iterable[str]) -> list[AnsibleError]:
    """Every error block in Ansible's output ``lines``, in order."""
    errors, block = [], None
    for raw in lines:
        for line in raw.replace("\r", "").split("\n"):
            if line.startswith(STARTS):
                if block is not None:
                    errors.append(_parse_block(block))
                block = [line.split(" ", 1)[1] if line.startswith("ERROR! ") else line[len("[ERROR]: "):]]
            elif block is not None and OTHER_MESSAGE.match(line):
                errors.append(_parse_block(block))
                block = None
            elif block is not None:
                block.append(line)
    if block is not None:
        errors.append(_parse_block(block))
    return errors


def _parse_block(block: list[str]) -> AnsibleError:
    """The message and origin of one error block; excerpts of the source are left out."""
    message: list[str] = []
    origin = None
    skipping = False  # inside a source excerpt
    for line in block:
        if found := ORIGIN_219.match(line):
            origin = origin or found[1].strip()
            skipping = True
        elif found := ORIGIN_218.match(line):
            origin = origin or f"{found[1]}:{found[2]}:{found[3]}"
        elif line.strip() == EXCERPT_218:
            skipping = True
        elif line.strip() == CAUSED_BY:
            skipping = False
            message.append("caused by:")
        elif not skipping and line.strip() and not any(p.match(line.strip()) for p in NOISE):
            message.append(line.strip())
    if message and message[-1] == "caused by:":
        message.pop()
    return AnsibleError("\n".join(message[:MAX_MESSAGE_LINES]), origin)
