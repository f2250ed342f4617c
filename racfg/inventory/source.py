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
        elif not str(part).isprintable():  # a key holding a newline must not break the message's line
            out += f"[{str(part)!r}]"
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


# --- bounds ----------------------------------------------------------------------------------------
# An inventory may come from a generator, a colleague or a ticket: whatever it holds, loading it must
# end quickly with a located refusal, never hang or exhaust memory (an alias "bomb" of nine levels of
# ten references expands to 10^9 values from a few hundred bytes). The limits are far above a real
# site: a 4,000-host site written out host by host is 0.7 MB, 92,500 values and 5 levels deep.
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_VALUES = 2_000_000  # mappings, lists and scalars of the document once every alias is expanded
MAX_DEPTH = 64  # nesting of mappings and lists, aliases expanded

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_NO_KEY = object()  # a mapping frame waiting for its next key
_DEPTH_HINT = "a site needs fewer than ten levels of mappings and lists"


@dataclass
class _Frame:
    """A mapping or list being built: its container, the key waiting for a value, and what it holds
    (``size``: its values, aliases expanded; ``height``: levels below it) for the anchor it may carry."""

    value: LDict | LList
    anchor: str | None
    key: Any = _NO_KEY
    key_line: int = 0
    size: int = 1
    height: int = 1


class _Builder:
    """Builds the LDict/LList tree from YAML events, one event at a time (no recursion, so no depth can
    overflow a stack), counting depth and values as it goes. An alias is the anchored value itself,
    with its size and height remembered when the anchor closed: the count of a bomb grows by a
    multiplication per reference, not by walking what it expands to."""

    def __init__(self, file: str, loader: Any) -> None:
        self.file = file
        self.loader = loader
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, size, height)
        self.open_anchors: set[str] = set()
        self.values = 0
        self.documents = 0
        self.root: Any = _NO_KEY

    def error(self, event: Any, message: str, hint: str | None = None) -> SourceError:
        return SourceError(self.file, event.start_mark.line + 1, message, hint)

    def build(self) -> Any:
        get_event, scalar, add = self.loader.get_event, self.scalar, self.add
        content = {yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent}
        while True:
            event = get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent and self.documents == 1:  # the common case first
                add(event, scalar(event), 1, 0)
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                frame = self.stack.pop()
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (frame.value, frame.size, frame.height)
                    self.open_anchors.discard(frame.anchor)
                add(event, frame.value, frame.size, frame.height, counted=True)
            elif kind in content and self.documents > 1:
                raise self.error(event, "more than one YAML document", "keep one site per file")
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                self.start(event)
            elif kind is yaml.AliasEvent:
                self.alias(event)
            elif kind is yaml.DocumentStartEvent:
                self.documents += 1
            elif kind is yaml.StreamEndEvent:
                break
        if self.root is _NO_KEY:
            raise SourceError(self.file, 1, "the file holds no YAML document", "start from an example in inventory/")
        return self.root

    def scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:
            value: Any = event.value
        else:
            if tag == _MERGE_TAG:
                raise self.error(event, "YAML merge keys (<<) are not supported",
                                 "use the inventory's 'defaults' section instead")
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            try:
                value = self.loader.construct_object(node, deep=True)
            except yaml.constructor.ConstructorError as exc:
                raise self.error(event, f"cannot read value: {exc.problem}") from None
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, 0)
        return value

    def alias(self, event: Any) -> None:
        if event.anchor in self.open_anchors:
            raise self.error(event, f"alias *{event.anchor} refers to a value that contains it",
                             "an inventory holds no recursive structures")
        if event.anchor not in self.anchors:
            raise self.error(event, f"alias *{event.anchor} refers to no anchor defined before it",
                             f"define &{event.anchor} first")
        value, size, height = self.anchors[event.anchor]
        self.add(event, value, size, height)

    def start(self, event: Any) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise self.error(event, f"nested more than {MAX_DEPTH} levels deep", _DEPTH_HINT)
        if self.stack and isinstance(self.stack[-1].value, LDict) and self.stack[-1].key is _NO_KEY:
            raise self.error(event, "a mapping key must be a plain value")
        self.values += 1  # the mapping or list itself (its values are counted as they are added)
        container: LDict | LList = LDict() if isinstance(event, yaml.MappingStartEvent) else LList()
        container.line = event.start_mark.line + 1
        if event.anchor is not None:
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(container, event.anchor))

    def add(self, event: Any, value: Any, size: int, height: int, counted: bool = False) -> None:
        """Place a finished value in its container (or as the document), counting what it adds."""
        stack = self.stack
        if counted:
            line = value.line
        else:
            line = event.start_mark.line + 1
            self.values += size
            if self.values > MAX_VALUES:
                raise self.error(event, f"the file holds more than {MAX_VALUES:,} values once its aliases "
                                 "are expanded", "an alias that repeats an alias multiplies: write the values out")
            if height and len(stack) + height > MAX_DEPTH:
                raise self.error(event, f"nested more than {MAX_DEPTH} levels deep once its aliases are expanded")
        if not stack:
            self.root = value
            return
        frame = stack[-1]
        frame.size += size
        if height >= frame.height:
            frame.height = height + 1
        container = frame.value
        if type(container) is LList:
            container.append(value)
            container.item_lines.append(line)
        elif frame.key is _NO_KEY:
            self.key(event, frame, value, line)
        else:
            container[frame.key] = value
            container.key_lines[frame.key] = frame.key_line
            frame.key = _NO_KEY

    def key(self, event: Any, frame: _Frame, value: Any, line: int) -> None:
        if isinstance(value, (LDict, LList)):
            raise self.error(event, "a mapping key must be a plain value")
        key = str(value)
        if key in frame.value:
            raise self.error(event, f"duplicate key '{key}' (first at line {frame.value.key_lines[key]})",
                             "each key may appear once per mapping")
        frame.key, frame.key_line = key, line


def load_yaml(path: Path, display: str | None = None) -> Any:
    """Load one YAML document into LDict/LList/scalars, or raise SourceError."""
    file = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:  # before reading a byte of it
            raise SourceError(file, 0, f"the file is {_mib(size)}; an inventory may be at most {_mib(MAX_FILE_BYTES)}")
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)  # a pipe or device has no size to stat
        if len(data) > MAX_FILE_BYTES:
            raise SourceError(file, 0, f"the file holds more than {_mib(MAX_FILE_BYTES)}; an inventory may be "
                              f"at most {_mib(MAX_FILE_BYTES)}")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise SourceError(file, 0, "file not found") from None
    except IsADirectoryError:
        raise SourceError(file, 0, "is a directory, expected a YAML file") from None
    except UnicodeDecodeError as exc:
        raise SourceError(file, 0, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(file, 0, f"cannot read: {exc.strerror}") from None
    return load_yaml_text(text, file)


def _mib(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB" if size % (1024 * 1024) else f"{size // 1024 // 1024} MiB"


def load_yaml_text(text: str, file: str = "<string>") -> Any:
    """Parse YAML text (see load_yaml)."""
    if len(text) > MAX_FILE_BYTES:
        raise SourceError(file, 0, f"the text is longer than {_mib(MAX_FILE_BYTES)}")
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.lstrip(" ")
        if stripped.startswith("\t"):
            raise SourceError(file, number, "tab character used for indentation", "YAML indents with spaces only")
    if not text.strip():
        raise SourceError(file, 1, "the file is empty", "start from an example in inventory/")
    loader = _Loader(text)
    try:
        return _Builder(file, loader).build()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in str(problem):  # libyaml's own bound (1000), met before ours
            raise SourceError(file, line, f"nested more than {MAX_DEPTH} levels deep", _DEPTH_HINT) from None
        hint = "a tab inside the text?" if "\t" in text and "tab" in str(problem).lower() else None
        raise SourceError(file, line, f"not valid YAML: {problem}", hint) from None
    except yaml.YAMLError as exc:
        raise SourceError(file, 0, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
