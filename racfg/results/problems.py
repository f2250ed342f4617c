"""A problem: one root cause, the evidence for it, the failures it explains, and the one fix.

A fault seldom fails one check: a switch port shut by hand fails the port's admin and oper state,
the host's carrier, LLDP at both ends and every path through it. Reported one by one, the cause is
buried under its symptoms and each symptom suggests its own wrong fix ("check the MTU",
"re-cable"). The diagnosis (racfg.validate.diagnosis) reads all results of a run and files each
failure under the problem that explains it; renderers show problems first, symptoms folded under
them. A failure nothing explains is its own problem.

The id is stable across runs (``port_admin:sw1:1/17``: kind, target, where), so a ticket, a CI
history or a script can follow one problem from run to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One root cause. ``root`` is the check id of the result that shows the cause itself."""

    id: str
    # port_admin, nic_admin, carrier, agent, time_sources, lldpd_config, sysctl_file, cabling, dataplane, address,
    # host_mtu, port_mtu, pfc, path, check
    kind: str
    target: str  # the host or switch the cause is on
    cause: str  # what is wrong, with its evidence: "sw1 1/17 shut down in the running config (not saved)"
    fix: str | None
    root: str
    symptoms: tuple[str, ...] = ()  # check ids of the other results it explains, in reading order

    @property
    def checks(self) -> tuple[str, ...]:
        """The root and every symptom: all results this problem accounts for."""
        return (self.root, *self.symptoms)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "target": self.target, "cause": self.cause, "fix": self.fix,
                "root": self.root, "symptoms": list(self.symptoms)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Problem:
        return cls(id=data["id"], kind=data.get("kind", "check"), target=data.get("target", ""),
                   cause=data.get("cause", ""), fix=data.get("fix"), root=data.get("root", ""),
                   symptoms=tuple(data.get("symptoms", ())))
