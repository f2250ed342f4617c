"""racfg.deploy.passes: which hosts and switches a deploy's apply pass runs on, from its read pass.

A host the reads found converged, whose every role's work they compare, is left alone; anything
the read could not tell counts as different; a switch change brings every cleanly read host along
(the fabric role's jumbo-frame check follows it); a host that failed its read stays failed."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from racfg.deploy.passes import reads_first, settled, to_apply
from racfg.deploy.switch_read import SwitchesRead
from racfg.errors import CannotRunError
from racfg.playbook import HostProgress, PlaybookTracker, Selection
from racfg.switches.facts import PfcFacts, SwitchFacts

CONVERGED = {"common": [], "fabric": [], "ofed": []}


@dataclass
class Plan:
    """What to_apply reads of a switch's plan (racfg.switches.ApplyResult)."""

    changes: list[str] = field(default_factory=list)
    facts: SwitchFacts | None = None


def tracker(hosts: dict[str, dict], would_change: dict[str, dict], not_read: dict[str, list[str]]) -> PlaybookTracker:
    read = PlaybookTracker()
    read.hosts = {name: HostProgress(name, **counts) for name, counts in hosts.items()}
    read.would_change, read.not_read = would_change, not_read
    return read


OK = {"ok": 5}


@pytest.mark.parametrize(("label", "hosts", "would_change", "not_read", "plans", "errors", "expected"), [
    ("converged: nothing to apply", {"dgx01": OK, "stor01": OK}, {"dgx01": CONVERGED, "stor01": CONVERGED}, {},
     {"sw1": Plan()}, {}, ([], [])),
    ("one drifted host alone", {"dgx01": OK, "stor01": OK},
     {"dgx01": {**CONVERGED, "fabric": ["live MTU or address of data0"]}, "stor01": CONVERGED}, {},
     {"sw1": Plan()}, {}, (["dgx01"], [])),
    ("a role the reads do not compare", {"dgx01": OK, "stor01": OK}, {"dgx01": CONVERGED, "stor01": CONVERGED},
     {"dgx01": ["gpu"]}, {}, {}, (["dgx01"], [])),
    ("a host that said nothing counts as different", {"dgx01": OK, "stor01": OK}, {"stor01": CONVERGED}, {},
     {}, {}, (["dgx01"], [])),
    ("a failed or unreachable read stays as it is", {"dgx01": {"failed": 1}, "stor01": {"unreachable": 1}},
     {}, {}, {}, {}, ([], [])),
    ("a switch change brings every cleanly read host", {"dgx01": OK, "stor01": OK, "stor02": {"failed": 1}},
     {"dgx01": CONVERGED, "stor01": CONVERGED}, {}, {"sw1": Plan(["1/1 mtu 1500 -> 9000"]), "sw2": Plan()}, {},
     (["dgx01", "stor01"], ["sw1"])),
    ("a switch that could not be read: its play says why", {"dgx01": OK}, {"dgx01": CONVERGED}, {}, {},
     {"sw2": CannotRunError("switch sw2: cannot reach 192.0.2.2:22")}, (["dgx01"], ["sw2"])),
])
def test_the_apply_pass_runs_where_the_read_found_something_to_do(label, hosts, would_change, not_read, plans,
                                                                  errors, expected):
    read = tracker(hosts, would_change, not_read)
    assert to_apply(read, plans, SwitchesRead({}, errors)) == expected, label


def test_switches_left_alone_are_in_the_recap_and_the_baseline():
    facts = SwitchFacts("sw2", "onyx", "3.10", {}, PfcFacts(False), {})
    read = tracker({"dgx01": OK}, {"dgx01": CONVERGED}, {})
    settled(read, {"sw1": Plan(["1/1 mtu 1500 -> 9000"], facts), "sw2": Plan([], facts)}, ["sw1"])
    assert read.hosts["sw2"].as_dict()["ok"] == 1 and "sw1" not in read.hosts
    assert read.switch_facts == {"sw2": facts.to_dict()}


@pytest.mark.parametrize(("playbook", "selection", "expected"), [
    ("site.yml", Selection(), True),
    ("site.yml", Selection(limit="dgx01"), True),
    ("site.yml", Selection(check=True), False),
    ("site.yml", Selection(tags="fabric"), False),
    ("site.yml", Selection(skip_tags="weka"), False),
    ("switches.yml", Selection(), False),
])
def test_a_plain_run_of_site_yml_reads_first(playbook: str, selection: Selection, expected: bool):
    assert reads_first(playbook, selection) is expected


def test_the_apply_pass_keeps_the_read_of_hosts_it_did_not_play():
    read = tracker({"dgx01": OK, "dgx02": OK}, {"dgx01": CONVERGED, "dgx02": CONVERGED}, {"dgx02": ["gpu"]})
    read.host_facts = {"dgx01": {"a": 1}, "dgx02": {"a": 2}}
    applied = tracker({"dgx02": {"ok": 9, "changed": 2}}, {}, {})
    applied.stats_seen = read.stats_seen = True
    both = read.then(applied)
    assert {n: h.changed for n, h in both.hosts.items()} == {"dgx01": 0, "dgx02": 2}
    assert both.host_facts == read.host_facts and both.not_read == {"dgx02": ["gpu"]} and both.stats_seen


@pytest.mark.parametrize(("options", "records"), [
    ({}, True),
    ({"limit": "dgx01"}, False),
    ({"tags": "fabric"}, False),
    ({"skip_tags": "weka"}, False),
    ({"check": True}, False),
    ({"baseline": False}, False),
])
def test_only_a_full_run_records_the_baseline(options: dict, records: bool) -> None:
    """The baseline is the site's last good state: a run limited to some hosts or roles leaves the
    rest as they were, so it records none (the help says "a successful full run")."""
    from racfg.deploy.deploy_run import DeployOptions, records_baseline

    assert records_baseline(DeployOptions(**options)) is records
