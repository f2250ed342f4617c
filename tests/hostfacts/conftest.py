"""Recorded host-tool output for the hostfacts parser tests.

Every fixture is a byte-for-byte copy of a file in the project's shared device outputs
(``shared/device-outputs/hosts``, beside the checkout; same file name, provenance in its SOURCES.md),
except the lldpcli, ``ip -j`` and veth/bridge ethtool recordings, which
``fixtures/capture_host_tools.sh`` recorded from the real tools in network namespaces on this machine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def read_fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture
def read() -> Callable[[str], str]:
    """``read("ibv_devinfo_....txt")``: a recording's text as the parser would get it from SSH."""
    return read_fixture
