"""A deploy reads first, then acts only where the read found something to do.

Why: a converged site's deploy used to run every task of every role on every host (some 25 per
host, most of them skipped), each a worker process per host on the controller, although the
roles' own reads already knew that nothing had to change (issue 40: a no-change deploy within 3x
of validate). So a plain deploy runs in two passes:

1. **read**: playbooks/read.yml, one play of two tasks per host: the common role's probe (which
   there also reads a storage server's drives), then the host's verdict (racfg.playbook.events):
   per role what the read found different, which roles' work they do
   not compare here (the GPU driver where there are GPUs, the array mount, Weka, MLNX_OFED,
   IPoIB), what the roles leave alone and why (a converged run still reports it), and what they
   refuse (a required GPU missing, a drive that would be refused, a data NIC that is the
   management interface: the verdict fails with it). Beside it each switch in scope is read once
   (racfg.deploy.switch_read) and planned without a second login.
2. **apply**: site.yml as before, limited to the hosts and switches with something to do; when a
   switch changes, every host read cleanly runs too (the fabric role's jumbo-frame check follows
   a switch change). Nothing to do: no second pass, and the read's facts are the baseline's.

A ``--check``, ``--tags`` or ``--skip-tags`` run, or another playbook, is one pass as before.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from racfg.connection import ConnectionOverrides
from racfg.deploy.switch_read import SwitchesRead, read_switches
from racfg.inventory import Cluster
from racfg.playbook import RUNNER_IDENT, HostProgress, Playbook, PlaybookTracker, Selection

if TYPE_CHECKING:
    from racfg.switches import ApplyResult

# The read pass's playbook (playbooks/read.yml): the roles' reads and decisions, and each host's
# verdict, in one play (drift's config layer runs it too).
READ_PLAYBOOK = "read.yml"
APPLY_IDENT = "ansible-apply"  # the apply pass's artifacts/<ident>/ in the run record

# How a pass is run: the playbook to run and a label for its progress -> (its tracker, interrupted).
RunPass = Callable[[Playbook, str], tuple[PlaybookTracker, bool]]
# The deploy's playbook (or the one named) with another selection, artifacts ident and extra vars.
MakePlaybook = Callable[[Selection, str, dict, str | None], Playbook]


def reads_first(playbook: str, selection: Selection) -> bool:
    """Whether this deploy runs as read then apply: a plain, changing run of site.yml."""
    return playbook == "site.yml" and not (selection.check or selection.tags or selection.skip_tags)


def read_then_apply(cluster: Cluster, selection: Selection, make: MakePlaybook, in_scope: list[str],
                    overrides: ConnectionOverrides, run_pass: RunPass,
                    ) -> tuple[PlaybookTracker, bool, Playbook]:
    """The two passes; (the deploy's tracker, interrupted, the last pass's playbook)."""
    reading = make(selection, RUNNER_IDENT, {}, READ_PLAYBOOK)
    with ThreadPoolExecutor(max_workers=1) as pool:
        switches_read = pool.submit(read_switches, cluster, in_scope, overrides)
        read, interrupted = run_pass(reading, "reading")
        switches = switches_read.result()
    if interrupted or not read.stats_seen:
        return read, interrupted, reading
    for name in cluster.switches:  # the read pass runs no switch task: the plans below say what they need
        read.hosts.pop(name, None)
    plans = plan_switches(cluster, switches)
    hosts, changing = to_apply(read, plans, switches)
    settled(read, plans, changing)
    if not hosts and not changing:
        return read, False, reading
    applying = make(replace(selection, limit=",".join([*changing, *hosts])), APPLY_IDENT,
                    {"racfg_read_host_facts": False}, None)  # the read pass read them; a change reads them again
    applied, interrupted = run_pass(applying, "applying")
    return read.then(applied), interrupted, applying


def plan_switches(cluster: Cluster, switches: SwitchesRead) -> dict[str, ApplyResult]:
    """Each switch read's plan (what the switch play would change), made here without a login."""
    from racfg.switches import plan_from_facts
    from racfg.switches.intent import intended_for

    return {name: plan_from_facts(name, cluster.switches[name].platform, intended_for(cluster, name), facts)
            for name, facts in switches.facts.items()}


def to_apply(read: PlaybookTracker, plans: dict[str, ApplyResult], switches: SwitchesRead,
             ) -> tuple[list[str], list[str]]:
    """(hosts, switches) the apply pass runs on: a host whose read found a difference, or a role
    whose work it does not compare, or that said nothing (what the reads cannot tell counts as
    different); a switch with a plan or that could not be read (its play says why). A host that
    failed or was unreachable in the read stays as the read left it: the apply pass would only
    fail there again. Every host read cleanly when a switch changes."""
    clean = [name for name, host in read.hosts.items() if not (host.failed or host.unreachable)]
    changing = sorted([name for name, plan in plans.items() if plan.changes] + list(switches.errors))
    if changing:
        return sorted(clean), changing
    pending = [name for name in clean
               if name not in read.would_change or any(read.would_change[name].values()) or read.not_read.get(name)]
    return sorted(pending), []


def settled(read: PlaybookTracker, plans: dict[str, ApplyResult], changing: list[str]) -> None:
    """The switches the apply pass leaves alone, into the read's recap (ok, as the switch play
    would report them) and its switch facts (the baseline's)."""
    for name, plan in plans.items():
        if name in changing or plan.facts is None:
            continue
        read.hosts[name] = HostProgress(name, ok=1, current="done")
        read.switch_facts[name] = plan.facts.to_dict()
