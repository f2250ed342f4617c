"""The arguments and options several commands share: their declarations, and the checks that an
option that names something names something that exists, and that an output directory is writable,
before anything runs.

Why up front: a tag that names no role made deploy connect to every host and run nothing; an
unwritable ``--output`` failed after a whole validate run, as an "internal error". Each refusal
here is the user's input (exit 2) and reads ``COMMAND: OPTION VALUE: why (the names it knows)``.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

import typer
import yaml

from racfg.errors import RacfgError, UsageError
from racfg.inventory import Cluster, load_cluster
from racfg.paths import playbooks_dir, roles_dir, validators_dir
from racfg.validate import CATEGORIES

INVENTORY_ARG = typer.Argument(..., help="Inventory YAML file (see inventory/ for examples).",
                               envvar="RACFG_INVENTORY", show_default=False)


class ResultFormat(StrEnum):
    table = "table"
    json = "json"
    junit = "junit"
    md = "md"
    csv = "csv"


FORMAT_OPTION = typer.Option(ResultFormat.table, "--format", "-f", envvar="RACFG_FORMAT",
                             help="Results on stdout as a table, JSON, JUnit XML, Markdown or CSV.")
OUTPUT_OPTION = typer.Option(None, "--output", "-o", envvar="RACFG_OUTPUT",
                             help="Also write results.json, report.xml, report.md, report.csv and a "
                                  "self-contained report.html into this directory.")
LIMIT_OPTION = typer.Option(None, "--limit", "-l", envvar="RACFG_LIMIT",
                            help="Hosts, switches or groups (dgx, storage, switches), comma separated; globs.")
VERBOSE_OPTION = typer.Option(False, "--verbose", "-v", envvar="RACFG_VERBOSE", help="List passing checks too.")

# Ansible's own tag names: valid in --tags/--skip-tags whatever the playbooks define.
SPECIAL_TAGS = ("all", "always", "never", "tagged", "untagged")


def refuse(command: str, option: str, value: object, reason: str, hint: str | None = None) -> NoReturn:
    raise UsageError(f"{command}: {option} {value}: {reason}", hint=hint)


@contextmanager
def refusals_of(command: str) -> Iterator[None]:
    """Errors raised inside (by the library the command calls) name the command that refused."""
    try:
        yield
    except RacfgError as exc:
        if not exc.message.startswith(f"{command}:"):
            exc.message = f"{command}: {exc.message}"
        raise


def inventory(command: str, path: Path | str) -> Cluster:
    """The inventory; its errors (a missing file, a field at file:line) name the command too."""
    with refusals_of(command):
        return load_cluster(path)


def split_list(value: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``: the comma-separated lists options take."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def one_of(command: str, option: str, values: Iterable[str], known: Iterable[str], noun: str,
           plural: str | None = None) -> None:
    """Refuse the first of ``values`` that is not in ``known``, listing what is."""
    known = list(known)
    for value in values:
        if value not in known:
            refuse(command, option, value, f"no such {noun} ({plural or noun + 's'}: {', '.join(known) or 'none'})")


# --- output directories ------------------------------------------------------------------------

def writable_dir(command: str, option: str, path: Path | None) -> Path | None:
    """Make ``path`` (a directory the command writes into) and prove a file can be written there.

    Creating it up front is what the command would do at its end anyway; refusing now keeps a
    run (a deploy, a half-hour smoke) from ending on an error about where to put its report."""
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        refuse(command, option, path, "exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        refuse(command, option, path, f"cannot create this directory ({exc.strerror or exc})",
               hint="give a directory you can write to")
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".racfg-probe-"):
            pass
    except OSError as exc:
        refuse(command, option, path, f"cannot write into this directory ({exc.strerror or exc})",
               hint="give a directory you can write to")
    return path


# --- Ansible tags ------------------------------------------------------------------------------

class _AnsibleYaml(yaml.SafeLoader):
    """Reads playbooks and roles for their tags: Ansible's own YAML tags (!unsafe, !vault) read as None."""


_AnsibleYaml.add_multi_constructor("!", lambda _loader, _suffix, _node: None)


def _tags_in(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "tags" and isinstance(value, (list, str)):
                items = value if isinstance(value, list) else str(value).split(",")
                found |= {str(t).strip() for t in items if t is not None and "{{" not in str(t)} - {""}
            found |= _tags_in(value)
    elif isinstance(node, list):
        for item in node:
            found |= _tags_in(item)
    return found


@functools.cache
def playbook_tags() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(roles, other tags) the shipped playbooks and roles define, read from their files: the role
    names that are tags, then every other tag (Ansible's special ones left out)."""
    files = [*playbooks_dir().glob("*.yml"), *roles_dir().glob("*/tasks/*.yml"),
             *roles_dir().glob("*/handlers/*.yml")]
    tags: set[str] = set()
    for path in files:
        try:
            tags |= _tags_in(yaml.load(path.read_text(), Loader=_AnsibleYaml))
        except (OSError, yaml.YAMLError):
            continue  # a file Ansible cannot read either: deploy reports it with Ansible's own words
    role_names = {p.name for p in roles_dir().iterdir() if p.is_dir()}
    return tuple(sorted(tags & role_names)), tuple(sorted(tags - role_names - set(SPECIAL_TAGS)))


def tags(command: str, option: str, value: str | None) -> None:
    """Every tag of ``--tags``/``--skip-tags`` is a role, a tag the playbooks define, or Ansible's own."""
    roles, others = playbook_tags()
    known = {*roles, *others, *SPECIAL_TAGS}
    for tag in split_list(value):
        if tag not in known:
            extra = f"; other tags: {', '.join(others)}" if others else ""
            refuse(command, option, tag, f"no such role or tag (roles: {', '.join(roles)}{extra})")


# --- hosts, switches and groups ----------------------------------------------------------------

def _groups(cluster: Cluster) -> list[str]:
    """The groups of the rendered inventory (racfg.render): all, cluster, each host role, switches."""
    return ["all", "cluster", *sorted({h.role for h in cluster.hosts}), "switches"]


def limit(command: str, option: str, value: str | None, cluster: Cluster) -> None:
    """Every part of an Ansible-style pattern (``dgx01,storage``, ``dgx*:!dgx02``, ``~dgx0[12]``,
    ``dgx[0:1]``) names a host, switch or group of the site."""
    names = [h.name for h in cluster.hosts] + list(cluster.switches)
    groups = _groups(cluster)
    for part in (t.strip() for t in re.split(r",|:(?![^\[]*\])", value or "")):  # not dgx[0:1]'s colon
        token = part.lstrip("!&")
        if not token:
            continue
        if token.startswith("@"):
            if not Path(token[1:]).is_file():
                refuse(command, option, part, "no such file of host names")
            continue
        if token.startswith("~"):
            try:
                matched = any(re.match(token[1:], n) for n in [*names, *groups])
            except re.error as exc:
                refuse(command, option, part, f"not a regular expression ({exc})")
        else:
            group = token.split("[", 1)[0] if token.endswith("]") else None  # a group's subscript: dgx[0:1]
            matched = token in groups or group in groups or any(fnmatch.fnmatchcase(n, token) for n in names)
        if not matched:
            refuse(command, option, part, f"no host, switch or group of site {cluster.name} matches",
                   hint=f"groups: {', '.join(groups)}; hosts and switches: {_sample(names)}")


def _sample(names: list[str], most: int = 12) -> str:
    return ", ".join(names[:most]) + (f" ... ({len(names)} in all)" if len(names) > most else "")


def hosts_of_role(command: str, option: str, values: list[str], cluster: Cluster, role: str) -> None:
    one_of(command, option, values, [h.name for h in cluster.role(role)], f"{role} host")


# --- validate's checks -------------------------------------------------------------------------

@functools.cache
def validator_checks() -> tuple[tuple[str, str], ...]:
    """(category, check name) of every validator function shipped (validators/test_CATEGORY.py)."""
    out = []
    for path in sorted(validators_dir().glob("test_*.py")):
        category = path.stem.removeprefix("test_")
        out += [(category, name) for name in re.findall(r"^(?:async )?def test_(\w+)", path.read_text(), re.M)]
    return tuple(out)


def categories(command: str, option: str, values: list[str]) -> None:
    one_of(command, option, values, CATEGORIES, "category", "categories")


def check_globs(command: str, option: str, globs: list[str], cluster: Cluster) -> None:
    """Each ``--check`` glob matches some check id ``TARGET/CATEGORY/NAME[LABEL]`` of this site.

    The label (a NIC, a drive) is known only once the checks are laid out per host, so a glob
    that ends in one is compared without it."""
    targets = ["cluster", *(h.name for h in cluster.hosts), *cluster.switches]
    checks = validator_checks()
    for glob in globs:
        bare = re.sub(r"\[[^\]/]*\]$", "", glob)
        if not any(fnmatch.fnmatchcase(f"{t}/{c}/{n}", g) for t in targets for c, n in checks for g in (glob, bare)):
            refuse(command, option, glob, f"matches no check of site {cluster.name}",
                   hint="check ids read TARGET/CATEGORY/NAME, e.g. '*/network/mtu*' "
                        "(racfg validate --verbose lists them)")
