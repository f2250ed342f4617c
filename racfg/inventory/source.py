"""YAML loading that remembers where every value came from.

Errors must name ``file:line field.path`` (users' top complaint with validation tools is
unreadable errors), so the loader keeps the line of every mapping key and sequence item.
It also refuses what PyYAML silently accepts: duplicate keys and tab indentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

try:  # the C composer is ~10x faster and keeps the same marks
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader

Loc = tuple[str | int, ...]


class LDict(dict):
    """A dict that knows the line of each key (1-based) and its own line."""

    line: int = 0
    key_lines: dict[str, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines = {}


class LList(list):
    """A list that knows the line of each item (1-based) and its own line."""

    line: int = 0
    item_lines: list[int]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.item_lines = []


@dataclass(frozen=True)
class SourceError(Exception):
    """The file is not YAML we accept: carries file, line and message.

    ``line`` is 0 for a problem with the file as a whole (missing, unreadable): no line is shown
    then, since ``file:0`` points at a place that does not exist."""

    file: str
    line: int
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        text = f"{located(self.file, self.line)}: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


def located(file: str, line: int) -> str:
    """``file:line``, or just ``file`` when the problem is the whole file (line 0)."""
    return f"{file}:{line}" if line > 0 else file


def format_path(loc: Loc) -> str:
    """``('hosts', 3, 'nics', 0, 'port')`` -> ``hosts[3].nics[0].port``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def line_of(root: Any, loc: Loc) -> int:
    """The line of the deepest part of ``loc`` that exists in the loaded tree."""
    node, line = root, getattr(root, "line", 0) or 1
    for part in loc:
        if isinstance(node, LDict) and isinstance(part, str) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part] if part < len(node.item_lines) else line
            node = node[part]
        else:
            break
    return line


def _convert(node: yaml.Node, file: str, scalars: yaml.constructor.SafeConstructor) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = LDict()
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise SourceError(file, key_node.start_mark.line + 1, "YAML merge keys (<<) are not supported",
                                  "use the inventory's 'defaults' section instead")
            key = _convert(key_node, file, scalars)
            if isinstance(key, (LDict, LList)):
                raise SourceError(file, key_node.start_mark.line + 1, "a mapping key must be a plain value")
            key = str(key)
            if key in out:
                raise SourceError(
                    file, key_node.start_mark.line + 1,
                    f"duplicate key '{key}' (first at line {out.key_lines[key]})",
                    "each key may appear once per mapping",
                )
            out[key] = _convert(value_node, file, scalars)
            out.key_lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = LList()
        seq.line = node.start_mark.line + 1
        for item in node.value:
            seq.append(_convert(item, file, scalars))
            seq.item_lines.append(item.start_mark.line + 1)
        return seq
    # scalars: plain strings as they are (the common case, and the slow one in PyYAML);
    # everything else through the safe constructor (int, float, bool, null, timestamps ...)
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    return scalars.construct_object(node, deep=True)


def load_yaml(path: Path, display: str | None = None) -> Any:
    """Load one YAML document into LDict/LList/scalars, or raise SourceError."""
    file = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(file, 0, "file not found") from None
    except IsADirectoryError:
        raise SourceError(file, 0, "is a directory, expected a YAML file") from None
    except UnicodeDecodeError as exc:
        raise SourceError(file, 0, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(file, 0, f"cannot read: {exc.strerror}") from None
    return load_yaml_text(text, file)


def load_yaml_text(text: str, file: str = "<string>") -> Any:
    """Parse YAML text (see load_yaml)."""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.lstrip(" ")
        if stripped.startswith("\t"):
            raise SourceError(file, number, "tab character used for indentation", "YAML indents with spaces only")
    if not text.strip():
        raise SourceError(file, 1, "the file is empty", "start from an example in inventory/")
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        hint = "a tab inside the text?" if "\t" in text and "tab" in str(problem).lower() else None
        raise SourceError(file, line, f"not valid YAML: {problem}", hint) from None
    except yaml.YAMLError as exc:
        raise SourceError(file, 0, f"not valid YAML: {exc}") from None
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        raise SourceError(file, 1, "the file holds no YAML document", "start from an example in inventory/")
    if len(nodes) > 1:
        raise SourceError(file, nodes[1].start_mark.line + 1, "more than one YAML document", "keep one site per file")
    try:
        return _convert(nodes[0], file, yaml.constructor.SafeConstructor())
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise SourceError(file, (mark.line + 1) if mark else 0, f"cannot read value: {exc.problem}") from None
