"""drift's one read of each switch: which switches it reads, and how the one read reaches each layer."""

from __future__ import annotations

from pathlib import Path

from racfg.connection import NO_OVERRIDES
from racfg.deploy.switch_read import SwitchesRead, read_switches
from racfg.drift.drift_run import DriftOptions, switches_to_read
from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg.switches.facts import PfcFacts, PortFacts, SwitchFacts

VALLAB = Path(__file__).parents[1] / "vallab.yaml"
ALL_LAYERS = ("config", "state", "environment")


def test_every_switch_is_read_when_the_environment_layer_runs_else_those_the_limit_selects():
    cluster = load_cluster(VALLAB)
    assert switches_to_read(cluster, DriftOptions(limit="dgx01"), ALL_LAYERS) == ["sw1"]
    assert switches_to_read(cluster, DriftOptions(limit="dgx01"), ("config", "state")) == []
    assert switches_to_read(cluster, DriftOptions(limit="switches"), ("state",)) == ["sw1"]
    assert switches_to_read(cluster, DriftOptions(), ("state",)) == ["sw1"]


def test_one_read_serves_validate_and_the_switch_play():
    facts = SwitchFacts("sw1", "onyx", "3.10", {"1/1": PortFacts(9000, True, True, 100.0)}, PfcFacts(False), {})
    error = CannotRunError("switch sw2: cannot reach 192.0.2.2:22 over SSH (timed out)")
    read = SwitchesRead({"sw1": facts}, {"sw2": error})
    assert read.for_validate() == {"sw1": facts, "sw2": error}
    assert read.as_dicts() == {"sw1": facts.to_dict()}  # an unread switch: the play logs in itself


def test_no_switch_to_read_reads_nothing():
    assert read_switches(load_cluster(VALLAB), [], NO_OVERRIDES) == SwitchesRead()
