"""Each fabric of the examples runs in the lab with one command, as written (issue 13).

One small inventory per fabric of the same shape as its example (2 dgx + 2 storage, the example's
MLNX_OFED pin, drive models, switch platform and password_env): Ethernet/Onyx (ra-ethernet),
Ethernet/EOS (ra-arista, modular port names, two rails), InfiniBand (ra-infiniband). Per fabric,
one lab (module scope, torn down after its tests): `racfg demo` converges with the substitutions
printed once, validates, smokes and ends with its summary and report (again: no changes), a
second deploy of the substituted roles changes nothing, and validate is clean
with the lab's skips saying why. bench/examples.py runs the full-size examples end to end. The
leaf-spine examples (ra-leafspine, ra-leafspine-eos: 40 hosts) run in the suite in their small form,
deployed and routed across the spines: tests/lab/test_leafspine_site_lab.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from labsupport import running_lab

from racfg.inventory import load_cluster
from racfg_lab import switch_password
from racfg_lab.substitutions import DRIVE_MODEL_REASON, IPOIB_REASON

# solo: the demo runs a smoke, which measures rates and counts discards on the lab's switch ports; with
# the other worker's labs on the same two CPUs a port can drop a packet that it would not drop alone.
pytestmark = [pytest.mark.lab, pytest.mark.solo]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SUBSTITUTED = {  # inventory -> the substitution lines demo must print, once each
    "exeth.yaml": ["MLNX_OFED 4.5-1.0.1.0 -> the distribution's inbox RDMA stack",
                   "declared drive models -> not checked", "switch sn2700 password: RACFG_EXETH_SN2700_PASSWORD"],
    "exeos.yaml": ["MLNX_OFED 4.5-1.0.1.0 -> the distribution's inbox RDMA stack",
                   "declared drive models -> not checked", "switch arista7368 password: RACFG_EXEOS_ARISTA_PASSWORD"],
    "exib.yaml": ["MLNX_OFED 4.5-1.0.1.0 -> the distribution's inbox RDMA stack",
                  "InfiniBand NICs -> Ethernet stand-ins", "switch sb7800 password: RACFG_EXIB_SB7800_PASSWORD"],
}


@dataclass
class Example:
    inventory: Path
    env: dict[str, str]  # the password_env variables unset: demo fills them in itself

    def racfg(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "racfg", *args], capture_output=True, text=True,
                              env=self.env, cwd=REPO, timeout=timeout)

    def with_passwords(self) -> dict[str, str]:
        """The environment a user has after exporting the lab switches' passwords (deploy, validate)."""
        cluster = load_cluster(self.inventory)
        return {**self.env, **{s.spec.credentials.password_env: switch_password(cluster.name, name)
                               for name, s in cluster.switches.items() if s.spec.credentials.password_env}}


# The suite runs the InfiniBand shape (the example that did not deploy at all before the lab's
# substitutions); the Ethernet shapes take as long again each, so they run with RACFG_ALL_EXAMPLES=1
# (and full size in bench/examples.py). Ethernet/Onyx deploy + validate also runs in the suite on
# tests/vallab.yaml, Ethernet/EOS switch automation on tests/switches/eoslab.yaml.
IN_SUITE = sorted(SUBSTITUTED) if os.environ.get("RACFG_ALL_EXAMPLES") else ["exib.yaml"]


@pytest.fixture(scope="module", params=IN_SUITE)
def example(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Example]:
    inventory = HERE / request.param
    cluster = load_cluster(inventory)
    env = {k: v for k, v in os.environ.items()
           if k not in {s.spec.credentials.password_env for s in cluster.switches.values()}}
    env.update(RACFG_STATE_DIR=str(tmp_path_factory.mktemp(f"state-{cluster.name}")), RACFG_PLAIN="1")
    with running_lab(inventory):
        yield Example(inventory, env)


def test_demo_converges_and_prints_each_substitution_once(example: Example):
    result = example.racfg("demo", str(example.inventory))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "failed=0 unreachable=0" in result.stdout
    for line in SUBSTITUTED[example.inventory.name]:
        assert sum(line in text for text in result.stdout.splitlines()) == 1, (line, out[:3000])
    summary = [line for line in result.stdout.splitlines() if line.startswith("summary: ")]
    assert summary[0].startswith("summary: deploy changed=") and "failed=0 unreachable=0" in summary[0], summary
    validate = next(line for line in summary if line.startswith("summary: validate: "))
    assert " 0 failed," in validate and " 0 errors" in validate and int(validate.split()[2]) > 50, validate
    smoke = next(line for line in summary if line.startswith("summary: smoke: "))
    assert " 0 failed," in smoke and " 0 errors" in smoke, smoke
    assert any(line.startswith("summary: links at ") for line in summary), summary
    assert any(line.startswith("summary: scaling efficiency ") for line in summary), summary
    report = Path(result.stdout.split("report: ", 1)[1].split()[0])
    assert report.name == "report.html" and "jumbo_frames" in report.read_text()
    rerun = example.racfg("demo", str(example.inventory), "--no-smoke")
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-4000:]
    assert "summary: deploy no changes failed=0 unreachable=0" in rerun.stdout, rerun.stdout[-3000:]


def test_second_deploy_of_the_substituted_roles_changes_nothing(example: Example):
    result = subprocess.run([sys.executable, "-m", "racfg", "deploy", str(example.inventory), "--yes", "--format",
                             "json", "--tags", "ofed,fabric,nvme_storage"], capture_output=True, text=True,
                            env=example.with_passwords(), cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    hosts = json.loads(result.stdout)["hosts"]
    assert hosts and all(h["failed"] == 0 and h["changed"] == 0 for h in hosts), hosts
    assert "MLNX_OFED 4.5-1.0.1.0 -> the distribution's inbox RDMA stack" in result.stderr  # announced, stdout JSON


def test_validate_is_clean_with_the_labs_skips_saying_why(example: Example):
    result = subprocess.run([sys.executable, "-m", "racfg", "validate", str(example.inventory), "--format", "json"],
                            capture_output=True, text=True, env=example.with_passwords(), cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    report = json.loads(result.stdout)
    results = report["results"]
    by_check = {r["check"]: r for r in results}
    assert not [r for r in results if r["status"] in ("fail", "error")]
    assert any("MLNX_OFED" in note for note in report["notes"])
    rdma_gpu = [r for r in results if r["category"] in ("rdma", "gpu")]
    assert rdma_gpu and all(r["status"] == "skip" and r["message"] for r in rdma_gpu)  # never passed in the lab
    assert all("not checked" in by_check[f"{h}/rdma/ofed_version"]["message"] for h in ("dgx01", "dgx02"))
    if example.inventory.name == "exib.yaml":
        ipoib = [r for r in results if "/rdma/ipoib_mode" in r["check"]]
        assert len(ipoib) == 4 and all(IPOIB_REASON in r["message"] for r in ipoib)
    else:
        models = [r for r in results if "/storage/model" in r["check"]]
        assert len(models) == 4 and all(r["status"] == "skip" and DRIVE_MODEL_REASON in r["message"]
                                        for r in models)
