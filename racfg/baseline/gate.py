"""A baseline is a good state: which hosts and switches a deploy may record, and why the others not.

Why: drift compares the site now against its baseline, so a baseline recorded over a broken host
(a NIC set down that the deploy did not see) makes drift call the broken state normal. So a full
deploy records a target's facts only when the run succeeded on it *and* that target then passes
validate's checks; a target that fails keeps its previous facts ("the last good baseline stands")
and the recap names the target and the problem (validate's diagnosis: cause and fix).

Cheap on purpose: only the *candidates* are validated: the targets the run changed, and those the
current baseline does not hold yet (a first deploy, a host added to the inventory). A run that
changed nothing keeps the baseline it has and validates nothing (a converged re-run stays as cheap
as its read pass). validate runs in this process, limited to the candidates, on the inventory the
deploy rendered (racfg.validate.validate_run.run_validate); its record is kept beside the deploy's.

Clock synchronisation, LLDP neighbours, BGP sessions and the paths over them take seconds to settle
after a deploy restarts chrony or lldpd, brings a NIC up or configures a switch: a candidate whose
only failures are those is validated again (those checks only) until they pass or ``settle_s`` runs
out, then judged on what it found.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.connection import ConnectionOverrides
from racfg.inventory import Cluster
from racfg.playbook import HostProgress
from racfg.results import Report, Result, Status

# Checks whose state converges by itself within seconds of a deploy: chrony's first sync, lldpd's
# first announcements heard at both ends, BGP sessions and the routes they carry on a routed fabric,
# and the paths between hosts that ride on them (validate's fabric category: LLDP and the path pings).
SETTLING = ("*/system/clock_synchronised", "*/fabric/*", "*/switches/port_lldp_neighbour*",
            "*/switches/isl_lldp*", "*/switches/bgp_session*", "*/switches/ecmp_links")
SETTLE_S = 90.0
SETTLE_POLL_S = 5.0

# (candidates, checks globs or None) -> validate's report of them.
Validate = Callable[[list[str], list[str] | None], Report]


@dataclass
class BaselineVerdict:
    """What a deploy did with the baseline: recorded (``path``), or why not, per target."""

    path: Path | None = None  # the baseline recorded by this run
    kept: str | None = None  # id of the baseline that stands (nothing recorded, or targets refused)
    note: str | None = None  # why nothing was recorded, when nothing was
    validated: list[str] = field(default_factory=list)  # the candidates validate checked
    recorded: list[str] = field(default_factory=list)  # targets whose facts are new in the baseline
    refused: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # target -> problems
    validate_run: str | None = None  # validate's run record

    def as_dict(self) -> dict[str, Any]:
        return {"recorded": str(self.path) if self.path else None, "kept": self.kept, "note": self.note,
                "validated": self.validated, "recorded_targets": self.recorded,
                "refused": [{"target": t, "problems": p} for t, p in self.refused.items()],
                "validate_run": self.validate_run}

    def lines(self) -> list[str]:
        """The recap's words: each refused target with its problems and fixes, and what stands."""
        out = []
        for target, problems in self.refused.items():
            stands = f"its last good baseline ({self.kept}) stands" if self.kept else "it has no baseline yet"
            out.append(f"baseline NOT recorded for {target}: it fails validate after the deploy; {stands}")
            for p in problems:
                out.append(f"  {target}: {p['cause']} [{p['id']}]" + (f"\n    fix: {p['fix']}" if p.get("fix") else ""))
        if self.validate_run and self.refused:
            out.append(f"  validate run: {self.validate_run}")
        return out


def candidates(targets: dict[str, HostProgress], baseline: dict[str, Any] | None) -> list[str]:
    """The targets a full deploy validates for the baseline: changed by the run, or not in the
    current baseline; a target the run failed on or could not reach is none (it keeps its facts)."""
    held = set((baseline or {}).get("hosts", {})) | set((baseline or {}).get("switches", {}))
    return sorted(name for name, t in targets.items()
                  if not (t.failed or t.unreachable or t.cannot_run) and (t.changed or name not in held))


def _settling(check: str) -> bool:
    return any(fnmatch.fnmatch(check, glob) for glob in SETTLING)


def _failing(report: Report, names: list[str]) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in report.results:
        if r.target in names and r.status in (Status.FAIL, Status.ERROR):
            out.setdefault(r.target, []).append(r)
    return out


def judge(names: list[str], validate: Validate, stop: threading.Event | None = None,
          settle_s: float = SETTLE_S, poll_s: float = SETTLE_POLL_S) -> tuple[dict[str, list[dict[str, Any]]], Report]:
    """Validate ``names``; (target -> its problems (id, kind, cause, fix), validate's first report)
    for each that fails. A target failing only settling checks is polled again until they pass."""
    stop = stop or threading.Event()
    report = validate(names, None)
    failing = _failing(report, names)
    waited = 0.0
    latest = {name: report for name in names}
    while waited < settle_s:
        pending = sorted(n for n, rs in failing.items() if all(_settling(r.check) for r in rs))
        if not pending or stop.wait(poll_s):
            break
        waited += poll_s
        again = validate(pending, list(SETTLING))
        for name in pending:
            latest[name] = again
            now = _failing(again, [name]).get(name)
            if now:
                failing[name] = now
            else:
                failing.pop(name)
    return {name: _problems(latest[name], rs) for name, rs in failing.items()}, report


def _problems(report: Report, failing: list[Result]) -> list[dict[str, Any]]:
    """The problems behind ``failing`` (validate's diagnosis), each once, in the report's order."""
    seen: dict[str, dict[str, Any]] = {}
    for r in failing:
        p = report.problem_of(r)
        if p is None:
            seen.setdefault(r.check, {"id": r.check, "kind": "check", "cause": r.message or r.check, "fix": r.fix})
        else:
            seen.setdefault(p.id, {"id": p.id, "kind": p.kind, "cause": p.cause, "fix": p.fix})
    return list(seen.values())


def validator(cluster: Cluster, overrides: ConnectionOverrides, rendered: Path,
              runs: list[str]) -> Validate:
    """validate's checks, in this process, on ``rendered`` (the deploy's inventory), limited to the
    targets asked for; each run's record path is appended to ``runs``."""

    def run(names: list[str], checks: list[str] | None) -> Report:
        from racfg.validate.validate_run import (  # pytest: only when a candidate is checked
            ValidateOptions,
            run_validate,
        )

        report, record = run_validate(cluster, ValidateOptions(limit=",".join(names), checks=checks or []),
                                      overrides, rendered=rendered)
        runs.append(str(record.path))
        return report

    return run
