"""Helpers to write small inventories: a valid base site that each test bends one way."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from racfg.inventory import Cluster, load_cluster

BASE: dict[str, Any] = {
    "site": {"name": "t"},
    "fabric": {"type": "ethernet", "speed": "100G", "data_subnets": ["198.19.0.0/24"],
               "mgmt_subnet": "198.18.0.0/24"},
    "switches": [{"name": "sw1", "platform": "onyx", "model": "SN2700", "mgmt": "198.18.0.2",
                  "credentials": {"password_env": "SW1_PASSWORD"}}],
    "hosts": [
        {"name": "dgx[01:02]", "role": "dgx", "mgmt": "198.18.0.11", "model": "DGX-1",
         "nics": [{"name": "data0", "address": "198.19.0.11/24", "switch": "sw1", "port": "1/1"}]},
        {"name": "st[01:08]", "role": "storage", "mgmt": "198.18.0.21",
         "drives": [{"path": "/dev/nvme[0:5]n1"}],
         "nics": [{"name": "data0", "address": "198.19.0.21/24", "switch": "sw1", "port": "1/17"}]},
    ],
    "software": {"ofed": {"flavor": "inbox"}, "weka": {"version": "3.3.3", "dist": "/srv/weka/weka-3.3.3.tar",
                                                       "sha256": "ab" * 32}},
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def ansible_plain(data: Any) -> Any:
    """``ansible-inventory --list`` output with its unsafe strings (``{"__ansible_unsafe": text}``, how it
    writes a ``!unsafe`` value) as plain strings."""
    if isinstance(data, dict):
        if set(data) == {"__ansible_unsafe"}:
            return data["__ansible_unsafe"]
        return {key: ansible_plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [ansible_plain(value) for value in data]
    return data


@pytest.fixture
def write_inventory(tmp_path: Path) -> Callable[..., Path]:
    """Write a dict (or raw text) as tmp_path/site.yaml and return its path."""

    def write(data: dict[str, Any] | str, name: str = "site.yaml") -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text)
        return path

    return write


@pytest.fixture
def make_cluster(write_inventory: Callable[..., Path]) -> Callable[..., Cluster]:
    def make(data: dict[str, Any]) -> Cluster:
        return load_cluster(write_inventory(data))

    return make
