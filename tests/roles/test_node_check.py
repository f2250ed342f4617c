"""The node check Slurm runs (roles/healthcheck/files/racfg-node-check) and the intent racfg renders for it
(racfg.render.node_check): the script's verdicts on recorded real output (``ip -j`` of the lab's iproute2,
``nvidia-smi -q -x`` of real GPUs, real kernel logs with Xids, ``chronyc tracking``), checked against
racfg's own parsers of the same output where validate has one, so the node judges as validate does;
its drain/resume decision; and one real run of the script on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

import pytest

from racfg.hostfacts.nvidia_smi import parse_query_xml
from racfg.hostfacts.xid import parse_kernel_log
from racfg.inventory import load_cluster
from racfg.render.ansible_inventory import host_vars
from racfg.render.node_check import REASON_MAX, REASON_PREFIX

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "roles/healthcheck/files/racfg-node-check"
LIB = ROOT / "roles/fabric/filter_plugins"
FIXTURES = ROOT / "tests/validate/fixtures"
HOSTFACTS = ROOT / "tests/hostfacts/fixtures"
V100S = FIXTURES / "nvidia-smi-q-x_8x-Tesla-V100S-PCIE-32GB_driver-460.73.01_datakit.xml"
H100 = ROOT / "tests/recordings/h100-device/nvidia-smi-q-x_1x-H100-80GB-HBM3_driver-580.159.04_dtd-v13_h100-device.xml"
XID_79 = HOSTFACTS / "dmesg_Xid-79-fallen-off-bus_with-NVSwitch-SXid-20034_MARKDOWN-QUOTED_gpud-readme.txt"
XID_13 = HOSTFACTS / "dmesg-ctime_Xid-13-and-109-CTX-SWITCH-TIMEOUT_MARKDOWN-QUOTED_gpud-readme.txt"
TRACKING = (FIXTURES / "chronyc-tracking_datakit-test.txt").read_text()

_loader = SourceFileLoader("racfg_node_check", str(SCRIPT))
nc = module_from_spec(spec_from_loader("racfg_node_check", _loader))
_loader.exec_module(nc)
dataplane = nc.load_dataplane(str(LIB))



def _link(name="data0", up=True, carrier=True, mtu=9000, address="198.19.50.11"):
    flags = ["BROADCAST", "MULTICAST"] + (["UP"] if up else []) + (["LOWER_UP"] if up and carrier else [])
    return {"ifindex": 3, "ifname": name, "flags": flags, "mtu": mtu, "operstate": "UP" if up else "DOWN",
            "addr_info": [{"family": "inet", "local": address, "prefixlen": 24}] if address else []}


ETH0 = {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
        "addr_info": [{"family": "inet", "local": "198.18.50.11", "prefixlen": 24}]}
ROUTES = [{"dst": "198.18.50.0/24", "dev": "eth0", "protocol": "kernel", "scope": "link", "flags": []},
          {"dst": "198.19.50.0/24", "dev": "data0", "protocol": "kernel", "scope": "link",
           "prefsrc": "198.19.50.11", "flags": []}]


class Reader(nc.Reader):
    """The node as recorded: command outputs by name, files, paths that exist, tools that are missing."""

    def __init__(self, outputs=None, files=None, exists=(), missing=()):
        super().__init__()
        self.outputs, self.files, self.paths, self.tools = outputs or {}, files or {}, set(exists), set(missing)

    def command(self, name):
        return self.outputs.get(name, (127, f"{name}: not found"))

    def file(self, name):
        return self.files.get(name)

    def exists(self, path):
        return path in self.paths

    def missing(self, tool):
        return tool in self.tools


def network(links=None, routes=None, neigh=None):
    return {"ip_addr": (0, json.dumps([ETH0, _link()] if links is None else links)),
            "ip_route": (0, json.dumps(ROUTES if routes is None else routes)),
            "ip_neigh": (0, json.dumps(neigh or []))}


@pytest.fixture(scope="module")
def intent() -> dict:
    """dgx01's document as racfg renders it for tests/vallab.yaml (its scheduler holds every host), GPUs required."""
    cluster = load_cluster(ROOT / "tests/vallab.yaml")
    hv = host_vars(cluster, next(h for h in cluster.hosts if h.name == "dgx01"))
    return {**hv["racfg_node_check"], "gpus": {"count": 8, "required": True}}


def problems(intent, reader):
    return nc.check(intent, reader, dataplane)


def ids(found) -> list[str]:
    return [p.check for p in found[0]]


def test_the_rendered_intent_is_the_inventory_s_for_scheduled_hosts_only(tmp_path: Path) -> None:
    text = (ROOT / "tests/vallab.yaml").read_text()
    path = tmp_path / "gpu-only.yaml"
    path.write_text(text.replace("    - {name: storage, roles: [storage]}\n", "").replace(
        "  default_partition: gpu\n", ""))
    cluster = load_cluster(path)
    docs = {h.name: host_vars(cluster, h).get("racfg_node_check") for h in cluster.hosts}
    assert [n for n, d in docs.items() if d] == ["dgx01", "dgx02", "dgx03"]  # the partition holds the dgx role
    doc = docs["dgx02"]
    assert doc["node"] == "dgx02" and doc["mgmt"] == "198.18.50.12"
    assert doc["nics"] == [{"name": "data0", "address": "198.19.50.12/24", "mtu": 9000, "switch": "sw1",
                            "port": "1/2"}]
    assert doc["gpus"] == {"count": 8}
    # Weka without a distribution: deploy installs no client, so the mount is not checked while there is none
    assert doc["mounts"] == [{"check": "weka/mounted", "point": "/mnt/weka", "types": ["wekafs"], "source": None,
                              "fix": "racfg deploy --tags weka", "unless_missing": "weka",
                              "why_missing": "no Weka client installed (software.weka.dist is not given)"}]
    assert doc["slurm"] == {"reason_prefix": REASON_PREFIX, "reason_max": REASON_MAX}
    plain = load_cluster(ROOT / "inventory/ra-ethernet.yaml")
    assert not any("racfg_node_check" in host_vars(plain, h) for h in plain.hosts)  # no scheduler: no check
    storage = host_vars(load_cluster(ROOT / "tests/vallab.yaml"), cluster.hosts[3])["racfg_node_check"]
    assert (storage["node"], storage["gpus"], storage["mounts"]) == ("stor01", {"count": 0}, [])


def test_the_xid_rule_travels_as_data_and_judges_as_validate(intent) -> None:
    """The script's hardware Xids are racfg's parser's non-application events, on real kernel logs."""
    for log in (XID_79, XID_13):
        text = log.read_text()
        found, _ = problems({**intent, "nics": [], "mounts": [], "clock": None},
                            Reader({"nvidia_smi": (0, V100S.read_text()), "journal_kernel": (0, text)},
                                   exists={nc.NVIDIA_LOADED}))
        racfg = {(e.switch or e.pci, e.code) for e in parse_kernel_log(text) if not e.application}
        lines = [p.line for p in found if p.check.startswith("gpu/xid")]
        assert len(lines) == len(racfg)
        assert all(any(f"{device}: " in line and f" {code} " in line for line in lines) for device, code in racfg)
    assert "Xid 79" in " ".join(p.line for p in problems(
        {**intent, "nics": [], "mounts": [], "clock": None},
        Reader({"nvidia_smi": (0, V100S.read_text()), "journal_kernel": (0, XID_79.read_text())},
               exists={nc.NVIDIA_LOADED}))[0])


def test_xid_13_and_109_are_an_application_s_not_the_board_s(intent) -> None:
    found, _ = problems({**intent, "nics": [], "mounts": [], "clock": None},
                        Reader({"nvidia_smi": (0, V100S.read_text()), "journal_kernel": (0, XID_13.read_text())},
                               exists={nc.NVIDIA_LOADED}))
    assert found == []


@pytest.mark.parametrize("xml", [V100S, H100], ids=["V100S-8", "H100-1"])
def test_gpus_are_counted_and_their_memory_judged_as_racfg_s_parser_reads_them(intent, xml: Path) -> None:
    text = xml.read_text()
    smi = parse_query_xml(text)
    base = {**intent, "nics": [], "mounts": [], "clock": None}
    found, _ = problems({**base, "gpus": {"count": len(smi.gpus), "required": True}},
                        Reader({"nvidia_smi": (0, text)}))
    assert found == []
    found, _ = problems({**base, "gpus": {"count": len(smi.gpus) + 1, "required": True}},
                        Reader({"nvidia_smi": (0, text)}))
    assert [p.check for p in found] == ["gpu/count"]
    pending = text.replace("<pending_retirement>No</pending_retirement>",
                           "<pending_retirement>Yes</pending_retirement>", 1)
    if pending != text:  # the recording reports page retirement (Volta): racfg's parser and the script agree
        first = parse_query_xml(pending).gpus[0]
        assert first.memory.retirement_pending
        found, _ = problems({**base, "gpus": {"count": len(smi.gpus), "required": True}},
                            Reader({"nvidia_smi": (0, pending)}))
        assert [p.check for p in found] == [f"gpu/memory_health[{first.bus_id}]"]


def test_a_gpu_check_that_did_not_run_never_passes(intent) -> None:
    """No nvidia-smi: a problem where the site requires the GPUs; in a lab (gpu_required false) a note
    that says it was not checked, never a pass."""
    base = {**intent, "nics": [], "mounts": [], "clock": None}
    found, notes = problems(base, Reader())
    assert [p.check for p in found] == ["gpu/count"] and "nvidia-smi not found" in found[0].line
    found, notes = problems({**base, "gpus": {"count": 8, "required": False}}, Reader())
    assert found == [] and notes == ["gpu: not checked: nvidia-smi not found; this site does not require GPUs "
                                     "here (gpu_required: false)"]


def test_a_healthy_data_nic_passes(intent) -> None:
    assert problems({**intent, "gpus": {}, "mounts": [], "clock": None}, Reader(network()))[0] == []


@pytest.mark.parametrize(("link", "routes", "want"), [
    (_link(up=False), ROUTES[:1], ["network/carrier[data0]"]),  # set down: the kernel drops its route too
    (_link(carrier=False), ROUTES, ["network/carrier[data0]"]),
    (_link(mtu=1500), ROUTES, ["network/mtu[data0]"]),
    (_link(address=None), ROUTES[:1], ["network/address[data0]", "network/route[data0]"]),
    (_link(), [*ROUTES, {"type": "blackhole", "dst": "198.19.50.21", "flags": []}],
     ["network/nothing_overrides[data0]"]),
    (_link(name="eth9"), ROUTES, ["network/present[data0]"]),
], ids=["admin-down", "no-carrier", "mtu", "address", "blackhole", "absent"])
def test_each_data_plane_fault_is_named_by_validate_s_check(intent, link, routes, want) -> None:
    found, _ = problems({**intent, "gpus": {}, "mounts": [], "clock": None}, Reader(network([ETH0, link], routes)))
    assert [p.check for p in found] == want
    assert all(p.fix for p in found)


def test_the_clock(intent) -> None:
    base = {**intent, "nics": [], "gpus": {}, "mounts": []}
    ok = {"chrony_active": (0, "active\n"), "chrony_tracking": (0, TRACKING)}
    assert problems(base, Reader(ok))[0] == []
    unsynced = {**ok, "chrony_tracking": (0, TRACKING.replace("Leap status     : Normal",
                                                                 "Leap status     : Not synchronised"))}
    assert ids(problems(base, Reader(unsynced))) == ["system/clock_synchronised"]
    assert ids(problems(base, Reader({"chrony_active": (3, "inactive\n")}))) == ["system/chronyd_running"]


def test_the_parallel_file_system_mount(intent) -> None:
    base = {**intent, "nics": [], "gpus": {}, "clock": None}
    weka = "weka01/default /mnt/weka wekafs rw,relatime 0 0\n"
    assert problems(base, Reader(files={"mounts": weka}))[0] == []
    found, notes = problems(base, Reader(files={"mounts": ""}, missing={"weka"}))  # no client installed (lab)
    assert found == [] and notes[0].startswith("weka/mounted: not checked")
    assert ids(problems(base, Reader(files={"mounts": ""}))) == ["weka/mounted"]  # installed, not mounted
    array = {"check": "array/mounted", "point": "/mnt/array", "types": ["nfs", "nfs4"], "source": "arr:/export",
             "fix": "racfg deploy --tags nfs_client"}
    good = "arr:/export /mnt/array nfs4 rw,vers=4.2 0 0\n"
    assert problems({**base, "mounts": [array]}, Reader(files={"mounts": good}))[0] == []
    assert ids(problems({**base, "mounts": [array]},
                        Reader(files={"mounts": good.replace("arr:", "other:")}))) == ["array/mounted"]


P = nc.Problem("network/carrier[data0]", "data0 admin down", "ip link set data0 up; racfg deploy --tags fabric")
U = nc.Problem("gpu/xid", "cannot read the kernel log", "check", True)


@pytest.mark.parametrize(("found", "state", "reason", "want"), [
    ([P], "IDLE", "", ("drain", f"{REASON_PREFIX} {P.check}: {P.fix}")),
    ([P, P], "MIXED", "", ("drain", f"{REASON_PREFIX} {P.check}: {P.fix} (+1 more)")),
    ([P], "IDLE+DRAIN", "maintenance by ops", None),  # someone else's drain: never touched
    ([], "IDLE+DRAIN", "maintenance by ops", None),
    ([], "DOWN*", "Not responding", None),
    ([P], "IDLE+DRAIN", f"{REASON_PREFIX} {P.check}: {P.fix}", None),  # already drained for it
    ([P], "IDLE+DRAIN", f"{REASON_PREFIX} gpu/count: reseat", ("drain", f"{REASON_PREFIX} {P.check}: {P.fix}")),
    ([], "IDLE+DRAIN", f"{REASON_PREFIX} {P.check}: {P.fix}", ("resume", "")),
    ([U], "IDLE+DRAIN", f"{REASON_PREFIX} {P.check}: {P.fix}", None),  # unknown: neither resume nor drain
    ([U], "IDLE", "", None),
    ([], "IDLE", "", None),
    ([], "IDLE+DRAIN", "racfg: network/mtu[data0]: racfg deploy", None),  # racfg gate's drain is gate's
])
def test_drain_and_resume_only_its_own(found, state, reason, want) -> None:
    assert nc.plan(found, state, reason, REASON_PREFIX, REASON_MAX) == want


def test_a_reason_fits_slurm_s_column() -> None:
    long = nc.Problem("network/nothing_overrides[data0]", "x", "remove it by hand " * 20)
    action = nc.plan([long, P], "IDLE", "", REASON_PREFIX, REASON_MAX)
    assert action[0] == "drain" and len(action[1]) <= REASON_MAX and action[1].endswith("(+1 more)")


RECORDED = ROOT / "tests/recordings/slurm/scontrol-show-node-drained.txt"  # Slurm 22.05 in the lab, -o form


@pytest.mark.parametrize(("node", "want"), [
    ("dgx01", ("IDLE", "")),
    ("dgx02", ("IDLE+DRAIN", "racfg:DRIFT-MTU data0 mtu 1500 want 9000; fix: racfg deploy --limit dgx02")),
    ("stor02", ("IDLE+DRAIN", "maintenance by ops")),
])
def test_the_node_s_state_and_reason_are_read_without_slurm_s_signature(monkeypatch, node, want) -> None:
    line = next(x for x in RECORDED.read_text().splitlines() if x.startswith(f"NodeName={node} "))
    monkeypatch.setattr(nc, "run", lambda argv, timeout=nc.TIMEOUT: (0, line + "\n"))
    assert nc.read_node(Reader(), node) == want
    multi = line.replace(" Reason=", "\n   Reason=")  # scontrol's default form: Reason on its own line
    monkeypatch.setattr(nc, "run", lambda argv, timeout=nc.TIMEOUT: (0, multi + "\n\n"))
    assert nc.read_node(Reader(), node) == want
    monkeypatch.setattr(nc, "run", lambda argv, timeout=nc.TIMEOUT: (1, "slurm_load_node error: Unable to contact"))
    assert "Unable to contact" in nc.read_node(Reader(), node)


def test_the_script_runs_for_real_here(tmp_path: Path) -> None:
    """The installed form: python3 runs the file with the rendered data file and the fabric role's
    declaration as its library; a data NIC this machine lacks is a problem, exit 1, one line."""
    doc = {"node": "here", "mgmt": "127.0.0.1", "nics": [{"name": "racfgnone0", "address": "198.19.99.1/24",
                                                           "mtu": 9000}], "routing": None, "mounts": [],
           "gpus": {"count": 0}, "clock": None, "slurm": {"reason_prefix": REASON_PREFIX, "reason_max": REASON_MAX}}
    path = tmp_path / "node-check.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--intent", str(path), "--lib", str(LIB), "--no-slurm"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == ["network/present[racfgnone0]: no interface racfgnone0 "
                                        "(fix: check the NIC and its driver)"]
    path.write_text(json.dumps({**doc, "nics": []}))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--intent", str(path), "--lib", str(LIB), "--no-slurm"],
                          capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "")
    path.write_text(json.dumps({**doc, "nics": [{"name": "lo"}]}))  # not what racfg writes: said, no traceback
    proc = subprocess.run([sys.executable, str(SCRIPT), "--intent", str(path), "--lib", str(LIB), "--no-slurm"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "is not a node check's intent" in proc.stderr and "Traceback" not in proc.stderr
