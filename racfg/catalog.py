"""What racfg knows about hardware: switch models and their port naming, host models, speeds.

Kept in one table so the inventory rules, the switch drivers and the lab all agree on what
``Ethernet3/1`` or ``1/17`` means on a given model. Unknown models are allowed when the
inventory gives their port count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLATFORMS = ("onyx", "eos", "mlnxos-ib")
ETHERNET_PLATFORMS = ("onyx", "eos")
IB_PLATFORMS = ("mlnxos-ib",)
# The largest port MTU each Ethernet platform accepts (Onyx: 9216; EOS: 9214, its documented maximum).
MAX_PORT_MTU = {"onyx": 9216, "eos": 9214}


@dataclass(frozen=True)
class SwitchModel:
    """A switch model: platform, front-panel port count and, for modular chassis, ports per slot.

    ``buffer_mib`` is the packet buffer its ports share (the ASIC's: Spectrum 16 MB, Spectrum-2
    and Tomahawk 2 42 MB, Tomahawk 3 64 MB); one congested port can take most of it. The lab
    gives each switch port that much queue, so an incast that the real switch absorbs (16 storage
    nodes sending to one client) is absorbed in the lab too. InfiniBand is credit-based and never
    drops for congestion; its figure only sizes the lab's queue.
    """

    name: str
    platform: str
    ports: int
    speed_gbps: float
    ports_per_slot: int = 0  # 0: fixed chassis, ports numbered 1..ports
    buffer_mib: int = 16

    @property
    def modular(self) -> bool:
        return self.ports_per_slot > 0


SWITCH_MODELS: dict[str, SwitchModel] = {
    m.name: m
    for m in (
        SwitchModel("SN2100", "onyx", 16, 100),
        SwitchModel("SN2410", "onyx", 56, 100),
        SwitchModel("SN2700", "onyx", 32, 100),
        SwitchModel("SN3700", "onyx", 32, 200, buffer_mib=42),
        SwitchModel("SB7800", "mlnxos-ib", 36, 100),
        SwitchModel("SB7700", "mlnxos-ib", 36, 100),
        SwitchModel("QM8700", "mlnxos-ib", 40, 200),
        SwitchModel("7060CX-32S", "eos", 32, 100),
        SwitchModel("7260CX3-64", "eos", 64, 100, buffer_mib=42),
        SwitchModel("7368X", "eos", 128, 100, ports_per_slot=8, buffer_mib=64),
        SwitchModel("vEOS", "eos", 128, 100),
    )
}


@dataclass(frozen=True)
class GpuModel:
    """A GPU model as the acceptance checks judge it: what nvidia-smi calls it, its NVLink and PCIe.

    ``patterns`` match ``product_name`` as nvidia-smi prints it (drivers before 450 print
    ``A100-SXM4-40GB``, later ones prefix ``NVIDIA``; V100s are ``Tesla V100-SXM2-16GB``).
    ``nvlink_gbytes_per_s`` is one link's rate in one direction, the figure ``nvidia-smi nvlink
    --status`` prints per link (NVLink 2 and later: 25 GB/s; Volta prints 25.781). ``pcie_gen`` and
    ``pcie_width`` are the link the GPU trains at in a server built for it.
    """

    name: str
    patterns: tuple[str, ...]
    nvlink_links: int = 0  # per GPU; 0: a PCIe card
    nvlink_gen: int = 0
    nvlink_gbytes_per_s: float = 0.0
    pcie_gen: int = 3
    pcie_width: int = 16

    def matches(self, product_name: str) -> bool:
        return any(re.search(p, product_name, re.I) for p in self.patterns)

    @property
    def nvlink_total_gbytes_per_s(self) -> float:
        """One GPU's NVLink bandwidth in one direction: links x per-link rate."""
        return self.nvlink_links * self.nvlink_gbytes_per_s


# NVIDIA's data sheets: V100 SXM2 (Volta, NVLink 2, 6 links, 300 GB/s both directions), V100 SXM3 in
# the DGX-2 (6 links to the NVSwitches), A100 SXM4 (NVLink 3, 12 links, 600 GB/s), H100 SXM5 (NVLink 4,
# 18 links, 900 GB/s). PCIe parts: V100(S) PCIe, A100 PCIe, T4, P100 PCIe (no NVLink on the card).
GPU_MODELS: dict[str, GpuModel] = {
    g.name: g
    for g in (
        GpuModel("Tesla V100 SXM2", (r"V100-SXM2",), 6, 2, 25.0, 3, 16),
        GpuModel("Tesla V100 SXM3", (r"V100-SXM3",), 6, 2, 25.0, 3, 16),
        GpuModel("A100 SXM4", (r"A100-SXM4",), 12, 3, 25.0, 4, 16),
        GpuModel("H100 SXM5", (r"H100 80GB HBM3", r"H100-SXM5"), 18, 4, 25.0, 5, 16),
        GpuModel("Tesla V100 PCIe", (r"V100S?-PCIE",), pcie_gen=3),
        GpuModel("A100 PCIe", (r"A100-PCIE",), pcie_gen=4),
        GpuModel("Tesla P100 PCIe", (r"P100-PCIE",), pcie_gen=3),
        GpuModel("Tesla T4", (r"\bT4\b",), pcie_gen=3),
    )
}


def gpu_model_named(text: str) -> GpuModel | None:
    """The catalog's GPU model for an inventory's ``gpu_model`` ("Tesla V100 SXM2 16GB") or an
    nvidia-smi product name ("Tesla V100-SXM2-16GB"); None when racfg does not know it."""
    squashed = re.sub(r"[\s_-]+", " ", text).strip().lower()
    for model in GPU_MODELS.values():
        if squashed.startswith(model.name.lower()) or model.matches(text):
            return model
    return None


@dataclass(frozen=True)
class HostModel:
    """A host model: GPU count for compute, qualified NVMe drive count for storage servers.

    GPU servers also name their GPU (``gpu_model``, the bill of materials' wording; ``gpu`` the
    catalog entry the checks judge against) and how the GPUs are joined: ``nvlink_topology``
    "hybrid cube mesh" (DGX-1, Apollo 6500: each GPU links straight to four others, two of them
    doubled) or "NVSwitch" (every GPU reaches every other at its full NVLink rate).
    """

    name: str
    role: str
    gpus: int = 0
    drives: int = 0
    data_ports: int = 1
    gpu_model: str = ""
    gpu: GpuModel | None = None
    nvlink_topology: str = ""


_V100_SXM2 = GPU_MODELS["Tesla V100 SXM2"]
HOST_MODELS: dict[str, HostModel] = {
    m.name: m
    for m in (
        HostModel("DGX-1", "dgx", gpus=8, data_ports=4, gpu_model="Tesla V100 SXM2 16/32GB", gpu=_V100_SXM2,
                  nvlink_topology="hybrid cube mesh"),
        HostModel("DGX-2", "dgx", gpus=16, data_ports=8, gpu_model="Tesla V100 SXM3 32GB",
                  gpu=GPU_MODELS["Tesla V100 SXM3"], nvlink_topology="NVSwitch"),
        HostModel("DGX A100", "dgx", gpus=8, data_ports=8, gpu_model="A100 SXM4 40/80GB", gpu=GPU_MODELS["A100 SXM4"],
                  nvlink_topology="NVSwitch"),
        HostModel("DGX H100", "dgx", gpus=8, data_ports=8, gpu_model="H100 SXM5 80GB", gpu=GPU_MODELS["H100 SXM5"],
                  nvlink_topology="NVSwitch"),
        # seeds 003/004: 8x Tesla V100 SXM2 16GB in NVLink hybrid cube mesh
        HostModel("HPE Apollo 6500 Gen10", "dgx", gpus=8, data_ports=4, gpu_model="Tesla V100 SXM2 16GB",
                  gpu=_V100_SXM2, nvlink_topology="hybrid cube mesh"),
        HostModel("Supermicro BigTwin 2029BT-HNR", "storage", drives=6, data_ports=2),
        HostModel("Supermicro 1029U-TN10RT", "storage", drives=10, data_ports=2),
        HostModel("Dell R640", "storage", drives=8, data_ports=2),
        HostModel("HPE Apollo 2000 Gen10", "storage", drives=4, data_ports=2),
        HostModel("HPE DL360 Gen10", "storage", drives=10, data_ports=2),
        HostModel("Penguin Relion", "storage", drives=0, data_ports=2),
    )
}


def host_gpu(model: str | None, gpu_model: str | None) -> GpuModel | None:
    """The GPU a host's checks judge against: the inventory's ``gpu_model`` where it names one the
    catalog knows, else the server model's."""
    if gpu_model and (named := gpu_model_named(gpu_model)) is not None:
        return named
    known = HOST_MODELS.get(model or "")
    return known.gpu if known else None

@dataclass(frozen=True)
class ArrayModel:
    """An external storage array: its mixed-I/O throughput at a read/write mix, as its vendor sized it."""

    name: str
    mixed_gbytes_per_s: float
    read_percent: int


ARRAY_MODELS: dict[str, ArrayModel] = {
    a.name: a
    for a in (
        ArrayModel("IntelliFlash N5800", 23.5, 80),  # seed 002, the FMS 2019 talk's table
    )
}

# InfiniBand link speeds by name (Gb/s, 4x links) and the IB MTUs as the MLNX-OS CLI spells them: the one
# table the parsers, the switch drivers and the lab's switch CLI all read.
IB_SPEEDS = {"sdr": 10.0, "ddr": 20.0, "qdr": 40.0, "fdr10": 40.0, "fdr": 56.0, "edr": 100.0, "hdr100": 100.0,
             "hdr": 200.0, "ndr": 400.0}
IB_MTUS = {256: "256", 512: "512", 1024: "1K", 2048: "2K", 4096: "4K"}


def ib_speed_name(gbps: float) -> str | None:
    """100.0 -> "edr" (the CLI's name for a rate; the first name listed for it)."""
    return next((name for name, value in IB_SPEEDS.items() if value == float(gbps) and name != "fdr10"), None)


_SPEED_NAMES = {name.upper(): value for name, value in IB_SPEEDS.items() if name != "fdr10"}
_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(g|gb|gbe|gbps|gb/s|gbit)?\s*$", re.I)


def parse_speed(text: str | int | float) -> float:
    """``"100G"``, ``"100GbE"``, ``"EDR"``, ``100`` -> Gb/s. Raises ValueError otherwise."""
    if isinstance(text, bool):
        raise ValueError("expected a speed such as 100G or EDR")
    if isinstance(text, (int, float)):
        if text <= 0:
            raise ValueError("speed must be positive")
        return float(text)
    name = text.strip().upper()
    if name in _SPEED_NAMES:
        return float(_SPEED_NAMES[name])
    match = _SPEED_RE.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"unknown speed {text!r}: expected e.g. 100G, 25G, EDR, HDR")
    return float(match.group(1))


@dataclass(frozen=True)
class PortName:
    """A parsed front-panel port: physical index (1-based) and optional breakout lane."""

    canonical: str  # inventory form: "1/3", "1/3/2", "Ethernet7", "Ethernet3/1"
    index: int  # physical port number, 1-based, across slots on modular chassis
    lane: int | None = None


_ONYX_RE = re.compile(r"^(?:eth(?:ernet)?\s*|ib\s*)?(\d+)/(\d+)(?:/(\d+))?$", re.I)
_EOS_RE = re.compile(r"^(?:ethernet|eth|et)?\s*(\d+)(?:/(\d+))?(?:/(\d+))?$", re.I)


def parse_port(platform: str, text: str | int, model: SwitchModel | None = None) -> PortName:
    """Parse a port as written in an inventory (or by a switch) into its canonical form.

    Onyx and MLNX-OS IB name ports ``1/N`` (``Eth1/N``, ``IB1/N``; breakout ``1/N/L``). EOS names
    them ``EthernetN`` on fixed switches (``EthernetN/L`` for a breakout lane) and
    ``EthernetS/P`` on modular ones (``EthernetS/P/L`` with a lane). Raises ValueError.
    """
    raw = str(text).strip()
    if platform in ("onyx", "mlnxos-ib"):
        if isinstance(text, int) or raw.isdigit():
            raw = f"1/{raw}"
        match = _ONYX_RE.match(raw)
        if not match or match.group(1) != "1":
            raise ValueError(f"port {text!r} is not a {platform} port name (expected 1/N, e.g. 1/1 or Eth1/1)")
        port, lane = int(match.group(2)), match.group(3)
        canonical = f"1/{port}" + (f"/{lane}" if lane else "")
        return PortName(canonical, port, int(lane) if lane else None)
    if platform == "eos":
        match = _EOS_RE.match(raw)
        if not match:
            raise ValueError(f"port {text!r} is not an EOS port name (expected EthernetN, e.g. Ethernet1 or Et1)")
        first, second, third = (int(g) if g else None for g in match.groups())
        assert first is not None
        if model is not None and model.modular:
            if second is None:
                raise ValueError(
                    f"port {text!r}: {model.name} is modular, ports are EthernetSLOT/PORT (e.g. Ethernet3/1)"
                )
            index = (first - 1) * model.ports_per_slot + second
            canonical = f"Ethernet{first}/{second}" + (f"/{third}" if third else "")
            return PortName(canonical, index, third)
        if third is not None:
            raise ValueError(f"port {text!r} is not an EOS port name on a fixed switch (EthernetN or EthernetN/L)")
        canonical = f"Ethernet{first}" + (f"/{second}" if second else "")
        return PortName(canonical, first, second)
    raise ValueError(f"unknown platform {platform!r}")


def port_by_index(platform: str, index: int, model: SwitchModel | None = None) -> str:
    """Canonical name of physical port ``index`` (1-based): the inverse of parse_port().index."""
    if platform in ("onyx", "mlnxos-ib"):
        return f"1/{index}"
    if model is not None and model.modular:
        slot, port = divmod(index - 1, model.ports_per_slot)
        return f"Ethernet{slot + 1}/{port + 1}"
    return f"Ethernet{index}"


def device_port_name(platform: str, canonical: str) -> str:
    """How the switch itself prints a port: ``Eth1/1`` on Onyx, ``IB1/1`` on IB, as-is on EOS."""
    if platform == "onyx":
        return f"Eth{canonical}"
    if platform == "mlnxos-ib":
        return f"IB{canonical}"
    return canonical
