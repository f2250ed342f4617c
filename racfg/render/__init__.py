"""Render an inventory into what the tools consume: an Ansible inventory tree and a fabric doc."""

from __future__ import annotations

from pathlib import Path

import yaml

from racfg.inventory.cluster import Cluster
from racfg.render.ansible_inventory import group_vars, host_vars, inventory_tree, switch_vars
from racfg.render.anta_catalog import anta_catalog_files
from racfg.render.connection_options import connection_options
from racfg.render.fabric_doc import fabric_markdown
from racfg.render.unsafe import add_representers, load_rendered, mark_unsafe

HEADER = "# Rendered by racfg from {source}. Do not edit: change the inventory and render again.\n"


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


def write_rendered(cluster: Cluster, out: Path) -> list[Path]:
    """Write the rendered tree to ``out``; remove host_vars files of hosts no longer present.

    Files are written only when their content changed, so a second render touches nothing.
    """
    files = render_files(cluster)
    written: list[Path] = []
    out.mkdir(parents=True, exist_ok=True)
    for rel, text in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    host_vars_dir = out / "host_vars"
    for stale in sorted(host_vars_dir.glob("*.yml")):
        if f"host_vars/{stale.name}" not in files:
            stale.unlink()
    return written


__all__ = ["connection_options", "load_rendered", "render_files", "write_rendered"]
