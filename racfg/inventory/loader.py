"""Load an inventory file into a Cluster, turning every problem into a located message."""

from __future__ import annotations

import difflib
import gc
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from racfg.errors import UsageError
from racfg.inventory import model as m
from racfg.inventory.cluster import Cluster, TooLarge, build_cluster
from racfg.inventory.inert import refused_strings
from racfg.inventory.leafspine import resolve_topology
from racfg.inventory.partitions import unknown_names
from racfg.inventory.source import LDict, LList, Loc, SourceError, format_path, line_of, load_yaml, located

_TYPE_TAG = re.compile(r"^(str|int|float|bool|none|list\[.*\]|dict\[.*\]|literal\[.*\]|function-.*|.*\[.*\])$")


@dataclass(frozen=True)
class Problem:
    """One reason an inventory file is invalid."""

    file: str
    line: int
    path: str
    message: str
    found: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        where = located(self.file, self.line) + (f" {self.path}" if self.path else "")
        text = f"{where}: {self.message}"
        if self.found is not None:
            text += f" (found: {self.found})"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class InventoryError(UsageError):
    """The inventory file is invalid (exit 2). Holds every problem found, in file order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line, p.path))
        super().__init__("\n".join(str(p) for p in self.problems))


def _all_field_names() -> set[str]:
    names: set[str] = set()
    stack: list[type[BaseModel]] = [m.Inventory]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        names.update(cls.model_fields)
        for obj in vars(m).values():
            if isinstance(obj, type) and issubclass(obj, m.Strict) and obj not in seen:
                stack.append(obj)
    return names


_FIELD_NAMES = _all_field_names()


def _clean_loc(root: Any, loc: tuple[Any, ...]) -> Loc:
    """Drop pydantic's union/type tags (``str``, ``function-after[...]``) that are not data keys."""
    out: list[str | int] = []
    node = root
    for part in loc:
        present = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if present:
            out.append(part)
            node = node[part]
            continue
        if isinstance(part, str) and _TYPE_TAG.match(part):
            continue
        out.append(part)
        node = None
    return tuple(out)


def _found(value: Any) -> str:
    """What the file holds where something else was expected: a short repr, or the kind of container."""
    if isinstance(value, (LDict, dict)):
        return "a mapping"
    if isinstance(value, (LList, list)):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(display: str, root: Any, error: Any) -> Problem:
    loc = _clean_loc(root, error["loc"])
    kind = error["type"]
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    hint = None
    found: str | None = None
    if kind == "extra_forbidden":
        key = str(loc[-1])
        message = f"unknown key '{key}'"
        close = difflib.get_close_matches(key, _FIELD_NAMES, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else "remove it, or see `racfg schema` for the allowed keys"
    elif kind == "missing":
        message = f"required key '{loc[-1]}' is missing"
        hint = "see `racfg schema` or the examples in inventory/"
    elif "input" in error and not isinstance(error["input"], (dict, list)):
        found = _found(error["input"])
    if kind == "string_pattern_mismatch":
        message = "value has characters not allowed here"
        hint = "letters, digits, '-', '_', '.'; a range is written [FIRST:LAST]"
    return Problem(display, line_of(root, loc), format_path(loc), message, found, hint)


def parse_inventory(root: Any, display: str) -> m.Inventory:
    """Validate a loaded YAML tree against the schema; raise InventoryError with located problems."""
    if not isinstance(root, dict):
        raise InventoryError([Problem(display, getattr(root, "line", 1) or 1, "",
                                      "the top level must be a mapping (site:, fabric:, switches:, hosts: ...)",
                                      _found(root))])
    # what no value may hold, whatever its field (racfg.inventory.inert): reported first, for the
    # whole file, and before the schema's own message for the same place
    problems: dict[str, Problem] = {}
    for loc, message, hint in refused_strings(root):
        path = format_path(loc)
        problems.setdefault(path, Problem(display, line_of(root, loc), path, message, None, hint))
    try:
        inventory = m.Inventory.model_validate(root)
    except ValidationError as exc:
        for error in exc.errors():
            problem = _problem(display, root, error)
            problems.setdefault(problem.path, problem)  # a union field reports once per place
        raise InventoryError(list(problems.values())) from None
    if problems:
        raise InventoryError(list(problems.values()))
    return inventory


def with_topology(cluster: Cluster) -> Cluster:
    """Attach the switch graph; what cannot be drawn (racfg.inventory.leafspine) is an InventoryError."""
    topology, problems = resolve_topology(cluster)
    if problems:
        raise InventoryError([Problem(cluster.display, cluster.line(p.loc), format_path(p.loc), p.message, None,
                                      p.hint) for p in problems])
    cluster.topology = topology
    return cluster


def with_lock_host(cluster: Cluster) -> Cluster:
    """``site.lock_host`` names a host of the inventory (after its ranges are expanded), or is refused."""
    named = cluster.inventory.site.lock_host
    names = [h.name for h in cluster.hosts]
    if named is not None and named not in names:
        loc = ("site", "lock_host")
        shown = ", ".join(names[:8]) + (f" ... ({len(names)} in all)" if len(names) > 8 else "")
        raise InventoryError([Problem(cluster.display, cluster.line(loc), format_path(loc),
                                      "no host of this inventory has this name", named,
                                      f"name one of its hosts: {shown or 'it has none'}")])
    return cluster


def with_scheduler(cluster: Cluster) -> Cluster:
    """The scheduler section names hosts and partitions this inventory has (racfg.inventory.partitions)."""
    problems = []
    for unknown in unknown_names(cluster):
        if unknown.what == "host":
            message = "names a host this inventory does not have"
            hint = "name hosts of the inventory, or ranges of them"
        elif unknown.what == "partition":
            message, hint = "names no partition of scheduler.partitions", "name one of the partitions declared"
        elif unknown.what == "partition twice":
            message, hint = "this partition is declared twice", "give each partition one entry"
        else:
            message, hint = "this partition holds no host", "give it hosts or roles, or remove it"
        problems.append(Problem(cluster.display, cluster.line(unknown.loc), format_path(unknown.loc), message,
                                unknown.value, hint))
    if problems:
        raise InventoryError(problems)
    return cluster


def load_cluster(path: str | Path, display: str | None = None) -> Cluster:
    """Load, validate and expand one inventory file. Raises InventoryError (exit 2)."""
    path = Path(path)
    shown = display or str(path)
    # Loading builds many small containers and no cycles; the cyclic GC would rescan them all
    # over and over (quadratic on big sites), so it pauses while the tree is built.
    enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            root = load_yaml(path, shown)
        except SourceError as exc:
            raise InventoryError([Problem(exc.file, exc.line, "", exc.message, None, exc.hint)]) from None
        inventory = parse_inventory(root, shown)
        try:
            cluster = build_cluster(inventory, path, shown, root)
        except TooLarge as exc:
            raise InventoryError([Problem(shown, line_of(root, exc.loc), format_path(exc.loc), str(exc), None,
                                          "a range names at most 100,000 hosts; a site far fewer")]) from None
        return with_topology(with_scheduler(with_lock_host(cluster)))
    finally:
        if enabled:
            gc.enable()


__all__ = ["InventoryError", "Problem", "format_path", "load_cluster", "parse_inventory"]
