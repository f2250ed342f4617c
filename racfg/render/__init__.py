"""Render an inventory into what the tools consume: an Ansible inventory tree and a fabric doc."""

from __future__ import annotations

from pathlib import Path

import yaml

from racfg.inventory.cluster import Cluster
from racfg.render.ansible_inventory import group_vars, host_vars, inventory_tree, switch_vars
from racfg.render.anta_catalog import anta_catalog_files
from racfg.render.connection_options import connection_options
from racfg.render.fabric_doc import fabric_markdown
from racfg.render.out_dir import RENDERED_MARK, Written, write_tree
from racfg.render.unsafe import add_representers, load_rendered, mark_unsafe

HEADER = RENDERED_MARK + " from {source}. Do not edit: change the inventory and render again.\n"


class _Dumper(yaml.SafeDumper):
    """Block style, no anchors/aliases (the same list twice must be written twice)."""

    def ignore_aliases(self, data: object) -> bool:
        return True


add_representers(_Dumper)


def _dump(data: object, source: str) -> str:
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=120,
                     explicit_start=True)
    return HEADER.format(source=source) + body


def render_files(cluster: Cluster) -> dict[str, str]:
    """All rendered files as {relative path: text}. Pure: same cluster -> same bytes, whatever runs
    on this machine (a lab's key and passwords reach a run through ``connection_options``, not here).
    Every string of the variables files is ``!unsafe`` (racfg.render.unsafe): read them back with
    ``load_rendered``."""
    source = Path(cluster.display).name
    files = {
        "hosts.yml": _dump(inventory_tree(cluster), source),
        "group_vars/all.yml": _dump(mark_unsafe(group_vars(cluster)), source),
        "fabric.md": fabric_markdown(cluster),
    }
    for host in cluster.hosts:
        files[f"host_vars/{host.name}.yml"] = _dump(mark_unsafe(host_vars(cluster, host)), source)
    for switch in cluster.switches.values():
        files[f"host_vars/{switch.name}.yml"] = _dump(mark_unsafe(switch_vars(cluster, switch)), source)
    files.update(anta_catalog_files(cluster))  # EOS switches only
    return files


def write_rendered(cluster: Cluster, out: Path) -> Written:
    """Write the rendered tree to ``out``: only files that changed (a second render touches nothing),
    never through a symbolic link, and removing only what racfg wrote there and nobody changed since
    (racfg.render.out_dir). deploy, drift and validate render into their run records with it too."""
    return write_tree(out, render_files(cluster))


__all__ = ["Written", "connection_options", "load_rendered", "render_files", "write_rendered"]
