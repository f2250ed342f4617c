"""Writing a rendered tree into a directory: only racfg's own files, never through a link.

``racfg render --out DIR`` may be pointed at a directory that holds more than racfg's files (an
operator's Ansible tree, a colleague's edits). So racfg keeps a manifest in DIR,
``.racfg-rendered.json``: each file it wrote there and the SHA-256 of what it wrote. Why a
manifest in DIR: it travels with the directory (copied, committed, rsync'ed) and so does the
knowledge of what racfg owns; a hash tells a file racfg wrote from the same file edited since,
which neither a file's name nor its header line can; a dot file at DIR's top is read by nothing
else (Ansible reads ``hosts.yml`` and ``host_vars``/``group_vars`` beside it, never DIR's other files).

A file no longer rendered (a host removed from the inventory) is removed only when the manifest
lists it and its content is still what racfg wrote; an edited one, or one racfg did not write, is
kept and reported. A rendered path that holds a file racfg did not write is refused, as is DIR or
anything racfg would write under it being a symbolic link (exit 2, naming it): every directory is
opened with O_NOFOLLOW and every file replaced by a rename inside it, so nothing is ever written
through a link, even one made while racfg runs.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from racfg.errors import UsageError

MANIFEST = ".racfg-rendered.json"
RENDERED_MARK = "# Rendered by racfg"  # the first line of every YAML file racfg renders (racfg.render.HEADER)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class RenderTargetError(UsageError):
    """Where render would write is a link, or holds something that is not racfg's (exit 2)."""


@dataclass
class Written:
    """What a render did in its directory."""

    written: list[Path] = field(default_factory=list)  # files written (new or changed)
    removed: list[str] = field(default_factory=list)  # stale files racfg wrote and nobody changed since
    kept: list[str] = field(default_factory=list)  # "path: why" for files left in place and worth a look
    replaced: list[str] = field(default_factory=list)  # rendered files someone had edited since racfg wrote them


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_tree(out: Path, files: dict[str, str]) -> Written:
    """Write ``files`` ({relative path: text}) under ``out``; see the module's docstring."""
    if out.is_symlink():
        raise RenderTargetError(f"{out} is a symbolic link: racfg does not write through links",
                                hint="give the directory it points to, or another one")
    if out.exists() and not out.is_dir():
        raise RenderTargetError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    done = Written()
    top = os.open(out, _DIR_FLAGS)
    try:
        manifest = _read_manifest(out, top, done)
        current = {rel: _preflight(out, top, rel, text, manifest) for rel, text in files.items()}
        for rel, text in sorted(files.items()):
            before = current[rel]
            if before == text:
                continue
            with _parent(top, rel, create=True) as (fd, name):
                _replace(fd, name, text)
            done.written.append(out / rel)
            if before is not None and rel in manifest and sha256(before) != manifest[rel]:
                done.replaced.append(f"{rel}: edited since racfg wrote it; your edit is replaced")
        _remove_stale(out, top, files, manifest, done)
        record = {"written_by": "racfg render", "files": {rel: sha256(files[rel]) for rel in sorted(files)}}
        _replace(top, MANIFEST, json.dumps(record, indent=1, sort_keys=True) + "\n")
    finally:
        os.close(top)
    return done


def _read_manifest(out: Path, top: int, done: Written) -> dict[str, str]:
    """{relative path: sha256} racfg wrote last time; {} when there is none or it cannot be read."""
    try:
        info = os.stat(MANIFEST, dir_fd=top, follow_symlinks=False)
    except FileNotFoundError:
        return {}
    if not stat.S_ISREG(info.st_mode):
        raise RenderTargetError(f"{out / MANIFEST} is not a regular file (a link?): racfg does not write through it")
    try:
        fd = os.open(MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
        with os.fdopen(fd, encoding="utf-8") as handle:
            files = json.load(handle).get("files")
        if isinstance(files, dict) and all(isinstance(v, str) for v in files.values()):
            return {str(k): v for k, v in files.items()}
    except (OSError, ValueError, AttributeError):
        pass
    done.kept.append(f"{MANIFEST}: unreadable, so no stale file is removed this time")
    return {}


def _preflight(out: Path, top: int, rel: str, text: str, manifest: dict[str, str]) -> str | None:
    """The file's text now (None if absent), once nothing on the way to it is a link and it is
    racfg's to replace."""
    parts = rel.split("/")
    opened: list[int] = []
    fd = top
    try:
        for i, part in enumerate(parts):
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
            shown = out / "/".join(parts[:i + 1])
            if stat.S_ISLNK(info.st_mode):
                raise RenderTargetError(f"{shown} is a symbolic link: racfg does not write through links",
                                        hint="remove the link, or render into another directory")
            if i == len(parts) - 1:
                if not stat.S_ISREG(info.st_mode):
                    raise RenderTargetError(f"{shown} is not a regular file")
                return _racfgs(shown, _read(fd, part), text, rel in manifest)
            fd = _open_dir(fd, part, shown)
            opened.append(fd)
        return None
    finally:
        for fd in opened:
            os.close(fd)


def _racfgs(shown: Path, before: str, text: str, listed: bool) -> str:
    """``before`` if the file is racfg's to replace: listed in the manifest, the same, or a file racfg
    rendered before it kept a manifest (its first line is racfg's); refused otherwise."""
    first, new_first = before.split("\n", 1)[0], text.split("\n", 1)[0]
    if listed or before == text or first == new_first or first.startswith(RENDERED_MARK):
        return before
    raise RenderTargetError(f"{shown} exists and racfg did not write it: racfg render does not replace it",
                            hint="move it away, or render into another directory")


def _remove_stale(out: Path, top: int, files: dict[str, str], manifest: dict[str, str], done: Written) -> None:
    """Remove what racfg wrote before and renders no more, where nobody changed it; report the rest."""
    for rel in sorted(set(manifest) - set(files)):
        with _parent(top, rel, create=False) as (fd, name):
            if fd < 0:
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode):
                done.kept.append(f"{rel}: no longer rendered, and no longer the file racfg wrote (not a regular file)")
            elif sha256(_read(fd, name)) != manifest[rel]:
                done.kept.append(f"{rel}: no longer rendered, but changed since racfg wrote it: kept")
            else:
                os.unlink(name, dir_fd=fd)
                done.removed.append(rel)
    for folder in sorted({rel.rsplit("/", 1)[0] for rel in files if "/" in rel}):
        with contextlib.suppress(OSError), _parent(top, f"{folder}/x", create=False) as (fd, _name):
            if fd < 0:
                continue
            for name in sorted(os.listdir(fd)):
                rel = f"{folder}/{name}"
                if not name.startswith(".") and rel not in files and rel not in manifest:
                    done.kept.append(f"{rel}: not written by racfg: kept")


@contextlib.contextmanager
def _parent(top: int, rel: str, *, create: bool) -> Iterator[tuple[int, str]]:
    """(an fd of ``rel``'s directory, opened without following links; its name there); fd -1 when a
    directory on the way is missing and ``create`` is false."""
    parts = rel.split("/")
    opened: list[int] = []
    fd = top
    try:
        for i, part in enumerate(parts[:-1]):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                fd = _open_dir(fd, part, Path("/".join(parts[:i + 1])))
            except FileNotFoundError:
                yield -1, parts[-1]
                return
            opened.append(fd)
        yield fd, parts[-1]
    finally:
        for fd in opened:
            os.close(fd)


def _open_dir(parent: int, name: str, shown: Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or a file where a directory should be
            raise RenderTargetError(f"{shown} is a symbolic link or not a directory: racfg does not write "
                                    "through links") from None
        raise


def _read(dir_fd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _replace(dir_fd: int, name: str, text: str) -> None:
    """Write ``name`` in the directory as a new file renamed over the old: a link there is replaced, not followed."""
    tmp = f".{name}.racfg-{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=dir_fd)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
