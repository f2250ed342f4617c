"""racfg's own SSH is one layer (issue 53 point 4): paramiko is imported in ``racfg/ssh/`` alone,
so one host-key policy judges every session racfg opens, and no paramiko object (a client, a
channel) reaches the commands or the site lock; netmiko, which switch sessions need per platform,
is imported by the switches alone, and takes its key check from racfg.ssh too.

Read from every import statement, lazy ones included, as the import-cycle test reads them.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "racfg"


def importers(library: str) -> set[str]:
    """The modules of racfg/ (paths from the repository) with an import statement for ``library``."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(name == library or name.startswith(f"{library}.") for name in names):
                found.add(str(path.relative_to(REPO)))
    return found


def test_paramiko_is_imported_in_the_ssh_layer_alone():
    outside = sorted(p for p in importers("paramiko") if not p.startswith("racfg/ssh/"))
    assert outside == [], "racfg's own SSH goes through racfg.ssh (HostSession, its channels, SshProtocolError)"
    assert "racfg/ssh/host_sessions.py" in importers("paramiko")  # the scan itself finds an import


def test_netmiko_is_imported_by_the_switches_alone():
    found = importers("netmiko")
    assert sorted(p for p in found if not p.startswith("racfg/switches/")) == []
    assert "racfg/switches/session.py" in found
