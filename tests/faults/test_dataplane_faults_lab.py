"""The data plane the fabric role owns (issue 52): each fault a person or a stray tool makes on a data NIC,
planted alone on a deployed lab as an operator would (over SSH), tried as an operator tries it:
drift's read pass says the host differs, validate names the real cause and its one fix, that fix runs
verbatim and repairs it, validate is clean after, and a deploy then changes nothing.

The lab is inventory/lab.yaml's site (2 dgx + 2 storage on one Onyx switch) under its own name and
subnets (a module-scoped lab beside the session's own lab.yaml), deployed once for the module; each
test leaves it as it found it (clean and converged), so the faults share it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import labsupport as testing
import pytest
from sitelab import DeployedSite, by_status

pytestmark = pytest.mark.lab

LAB_YAML = Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml"
BOGUS_MAC = "02:00:de:ad:be:ef"  # a MAC no NIC of the lab has


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DeployedSite]:
    """lab.yaml as site dplab (198.18.61.0/24, 198.19.61.0/24), deployed once and settled."""
    root = tmp_path_factory.mktemp("dplab")
    text = LAB_YAML.read_text().replace("name: lab\n", "name: dplab\n")
    inventory = root / "dplab.yaml"
    inventory.write_text(text.replace("198.18.0.", "198.18.61.").replace("198.19.0.", "198.19.61."))
    with testing.running_lab(inventory) as handle:
        deployed = DeployedSite(handle, root / "state", inventory)
        deployed.deploy()
        deployed.settled()
        yield deployed


@dataclass(frozen=True)
class Fault:
    name: str
    host: str
    plant: str  # the shell command an operator (or a stray tool) runs on the host
    undo: str  # the by-hand undo, run whatever the test found (the next test needs a clean lab)
    present: str  # a shell command that prints something while the fault is there
    problem: str  # the problem validate files it under (kind:host:nic)
    cause: str  # a phrase of the problem's cause
    drift: str  # a phrase of the config layer's result on the host (the read pass's line)


FAULTS = [
    Fault("nic_down", "stor01", "ip link set data0 down", "ip link set data0 up",
          "ip -o link show data0 | grep -v '[<,]UP[,>]'",
          "nic_admin:stor01:data0", "set down on the host", "data0: set down"),
    Fault("blackhole", "dgx01", "ip route add blackhole 198.19.61.21/32", "ip route del blackhole 198.19.61.21/32",
          "ip route show type blackhole | grep 198.19.61.21", "dataplane:dgx01:data0",
          "blackhole 198.19.61.21 overrides", "blackhole 198.19.61.21"),
    Fault("neighbour", "dgx01", f"ip neigh replace 198.19.61.21 lladdr {BOGUS_MAC} dev data0 nud permanent",
          "ip neigh del 198.19.61.21 dev data0",
          f"ip neigh show 198.19.61.21 dev data0 | grep -i {BOGUS_MAC}", "dataplane:dgx01:data0",
          f"lladdr {BOGUS_MAC}", "static neighbour entry 198.19.61.21"),
]


def run_fix(site: DeployedSite, fix: str) -> None:
    """The printed fix, verbatim (``racfg`` is this interpreter's; RACFG_YES answers its question)."""
    argv = shlex.split(fix)
    assert argv[0] == "racfg", fix
    proc = subprocess.run([sys.executable, "-m", "racfg", *argv[1:]], capture_output=True, text=True,
                          env={**site.env, "RACFG_YES": "1"}, timeout=900, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_fault_is_read_named_and_repaired_by_its_printed_fix(site: DeployedSite, fault: Fault):
    site.lab.ssh(fault.host, fault.plant)
    try:
        assert site.lab.ssh(fault.host, fault.present, check=False).stdout.strip(), "the fault is planted"

        # the read pass (drift's config layer, as a deploy's) sees it on the host
        code, drift = site.drift()
        assert code == 1
        fabric = [r for r in drift["results"] if r["check"].startswith(f"{fault.host}/config/fabric/")]
        assert any(fault.drift in r["check"] for r in fabric), [r["check"] for r in drift["results"]
                                                                 if r["status"] == "fail"]

        # validate names the cause and its one fix
        code, report = site.validate()
        assert code == 1
        problems = {p["id"]: p for p in report["problems"]}
        assert fault.problem in problems, json.dumps(report["problems"], indent=1)[:3000]
        problem = problems[fault.problem]
        assert fault.cause in problem["cause"], problem
        assert problem["fix"] == f"racfg deploy {site.inventory} --limit {fault.host} --tags fabric", problem
        if fault.host == "dgx01":  # the path it breaks is a symptom of it, not a problem of its own
            assert f"{fault.host}/fabric/jumbo_frames[data0]" in problem["symptoms"], problem
        assert len(problems) == 1, list(problems)

        run_fix(site, problem["fix"])
        assert not site.lab.ssh(fault.host, fault.present, check=False).stdout.strip(), "the fix repaired it"
    finally:  # never leave the fault for the next test, whatever failed
        site.lab.ssh(fault.host, fault.undo, check=False)

    site.settled([fault.host])
    code, report = site.validate()
    assert code == 0, sorted(by_status(report, "fail") | by_status(report, "error"))
    proc = site.racfg("deploy", str(site.inventory), "--yes", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {h["host"]: h["changed"] for h in json.loads(proc.stdout)["hosts"] if h["changed"]} == {}
