"""Recorded host-tool output for the hostfacts parser tests.

Every fixture is a byte-for-byte copy of a file in the project's shared device outputs
(``shared/device-outputs/hosts``, beside the checkout; same file name, provenance in its SOURCES.md),
except the lldpcli, ``ip -j`` and veth/bridge ethtool recordings, which
``fixtures/capture_host_tools.sh`` recorded from the real tools in network namespaces on this machine.
The recordings of ``tests/recordings/h100-device`` come from a real H100 (scripts/record_gpu_outputs.sh).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# What scripts/record_gpu_outputs.sh recorded on a real H100 (driver 580); provenance in its SOURCES.md.
DEVICE = Path(__file__).parents[1] / "recordings" / "h100-device"


def read_fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def read_device(name: str) -> str:
    """A recording of tests/recordings/h100-device, as racfg would have read it from the host."""
    return (DEVICE / name).read_text()


@pytest.fixture
def read() -> Callable[[str], str]:
    """``read("ibv_devinfo_....txt")``: a recording's text as the parser would get it from SSH."""
    return read_fixture
