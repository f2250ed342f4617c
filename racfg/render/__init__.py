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


def inventory_files(cluster: Cluster) -> dict[str, str]:
    """The Ansible inventory alone (hosts.yml, group_vars/, host_vars/): what the roles and validate's
    checks read. Pure: same cluster -> same bytes, whatever runs on this machine (a lab's key and
    passwords reach a run through ``connection_options``, not here). Every string of the variables
    files is ``!unsafe`` (racfg.render.unsafe): read them back with ``load_rendered``."""
    source = Path(cluster.display).name
    files = {
        "hosts.yml": _dump(inventory_tree(cluster), source),
        "group_vars/all.yml": _dump(mark_unsafe(group_vars(cluster)), source),
    }
    for host in cluster.hosts:
        files[f"host_vars/{host.name}.yml"] = _dump(mark_unsafe(host_vars(cluster, host)), source)
    for switch in cluster.switches.values():
        files[f"host_vars/{switch.name}.yml"] = _dump(mark_unsafe(switch_vars(cluster, switch)), source)
    return files


def render_files(cluster: Cluster) -> dict[str, str]:
    """All rendered files as {relative path: text}: the inventory, and what people and other tools read
    (fabric.md; the ANTA catalog where there are EOS switches)."""
    return {**inventory_files(cluster), "fabric.md": fabric_markdown(cluster), **anta_catalog_files(cluster)}


def write_rendered(cluster: Cluster, out: Path, *, inventory_only: bool = False) -> Written:
    """Write the rendered tree to ``out``: only files that changed (a second render touches nothing),
    never through a symbolic link, and removing only what racfg wrote there and nobody changed since
    (racfg.render.out_dir). deploy renders the whole tree into its run record; validate and drift only
    the inventory their checks read (``inventory_only``): the fabric doc and the catalog are for people
    and ANTA, and rendering them cost each re-check time for nothing it reads."""
    return write_tree(out, inventory_files(cluster) if inventory_only else render_files(cluster))


__all__ = ["Written", "connection_options", "load_rendered", "render_files", "write_rendered"]
