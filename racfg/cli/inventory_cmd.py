"""``racfg schema``, ``racfg check`` and ``racfg render``: the inventory commands."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import INVENTORY_ARG
from racfg.console import markdown_table, print_table, say
from racfg.errors import EXIT_CODES_HELP, ExitCode
from racfg.inventory import Cluster
from racfg.inventory.model import Inventory
from racfg.policy import RULES, BandwidthBudget, Finding, bandwidth_budget, evaluate
from racfg.render import write_rendered
from racfg.render.out_dir import MANIFEST
from racfg.summary import bill_of_materials, cabling


class CheckFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


def finding_text(cluster: Cluster, f: Finding) -> str:
    """``inventory/x.yaml:23 hosts[3].nics[0].port (dgx05): message (expected: 1..32, actual: 40)``."""
    subject = f" ({f.subject})" if f.subject else ""
    text = f"{cluster.where(f.loc)}{subject}: {f.message}"
    if f.expected is not None or f.actual is not None:
        text += f" (expected: {f.expected}, actual: {f.actual})"
    if f.hint:
        text += f" (hint: {f.hint})"
    return text


def finding_dict(cluster: Cluster, f: Finding) -> dict[str, Any]:
    return {
        "severity": f.severity,
        "rule": f.rule,
        "file": cluster.display,
        "line": cluster.line(f.loc),
        "path": f.path,
        "subject": f.subject,
        "message": f.message,
        "expected": f.expected,
        "actual": f.actual,
        "hint": f.hint,
    }


def _budget_lines(b: BandwidthBudget) -> list[str]:
    if b.gpu_servers == 0 or (b.storage_nodes == 0 and b.array is None):
        return ["Bandwidth budget: needs at least one dgx and one storage host (or an array)."]
    verdict = "keeps every GPU server fed" if b.fed else "does NOT keep every GPU server fed"
    table = ", ".join(f"{n} on {w}" for w, n in b.servers_by_workload().items())
    if b.array is not None:
        return [
            f"Bandwidth budget ({b.workload}): {b.gpu_servers} GPU servers need {b.demand:.2f} GB/s "
            f"({b.demand_per_server:.2f} GB/s each, links carry {b.client_link:.1f} GB/s each).",
            f"  {b.array} supplies {b.array_gbytes_per_s:g} GB/s mixed I/O, {b.training_share:.0%} of it for "
            f"training = {b.supply:.2f} GB/s; feeds {b.servers_fed} such servers: {verdict}.",
            f"  8-GPU servers it feeds for training: {table}.",
        ]
    iops = f", {b.supply_iops / 1e6:.2f}M IOPS 4K random reads" if b.supply_iops else ""
    return [
        f"Bandwidth budget ({b.workload}): {b.gpu_servers} GPU servers need {b.demand:.1f} GB/s "
        f"({b.demand_per_server:.2f} GB/s each, links carry {b.client_link:.1f} GB/s each).",
        f"  {b.storage_nodes} storage nodes supply {b.supply:.1f} GB/s (nodes {b.supply_nodes:.1f}, "
        f"links {b.supply_links:.1f}){iops}; headroom {b.headroom:+.0%}; feeds {b.servers_fed} such servers: "
        f"{verdict}.",
        f"  8-GPU servers it feeds for training: {table}.",
        *_spine_lines(b),
    ]


def _spine_lines(b: BandwidthBudget) -> list[str]:
    """The leaf-spine tier of the budget and the tier that limits first (absent on a single-tier site)."""
    lines = [f"  {b.cut_off} GPU server(s) share no switch island with every storage node."] if b.cut_off else []
    if b.spine is None:
        return lines
    s = b.spine
    carry = (f"the leaves' uplinks carry {s.capacity_crossing:.1f} GB/s of it before leaf {s.limiting_leaf}'s "
             f"({s.uplinks:.1f} GB/s each way) are full" if s.limiting_leaf else "nothing crosses them")
    return [*lines, f"  Spine tier: {s.crossing:.1f} GB/s of the demand crosses the spines ({s.cross_share:.0%} "
            f"of the reads: clients and storage on different leaves); {carry}.",
            f"  Limits first: {b.limiting_tier}."]


ISL_HEADER = ["leaf", "leaf port", "leaf address", "spine", "spine port", "spine address", "speed"]


def _isl_rows(cluster: Cluster) -> list[list[str]]:
    return [[i.leaf, i.leaf_port, str(i.leaf_address or "-"), i.spine, i.spine_port, str(i.spine_address or "-"),
             f"{i.speed_gbps:g}G"] for i in cluster.topology.isls]


def _print_table(cluster: Cluster, findings: list[Finding], budget: BandwidthBudget, topology: bool) -> None:
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if findings:
        say("Findings:")
        for f in findings:
            say(f"  {f.severity.upper():7} {finding_text(cluster, f)}", "red" if f.severity == "error" else "yellow")
        say("")
    if topology:
        print_table("Topology (switch -> port -> host NIC)", ["switch", "port", "host", "nic", "address", "speed"],
                    [[c.switch, c.port, c.host, c.nic, c.address, f"{c.speed_gbps:g}G"] for c in cabling(cluster)])
        say("")
        if cluster.topology.isls:
            print_table("Inter-switch links (leaf -> spine)", ISL_HEADER, _isl_rows(cluster))
            say("")
    print_table("Bill of materials", ["part", "model", "qty", "notes"],
                [[r.part, r.model, r.qty, r.notes] for r in bill_of_materials(cluster)])
    say("")
    for line in _budget_lines(budget):
        say(line)
    say("")
    status = "OK" if not errors else "FAILED"
    say(f"{cluster.name}: {status}: {errors} error(s), {warnings} warning(s), {len(cluster.hosts)} hosts, "
        f"{len(cluster.switches)} switch(es)", "green" if not errors else "red")


def _markdown(cluster: Cluster, findings: list[Finding], budget: BandwidthBudget, topology: bool) -> str:
    out = [f"# racfg check: {cluster.name}", "", "## Findings", ""]
    if findings:
        out.append(markdown_table(["severity", "where", "message", "expected", "actual", "hint"],
                                  [[f.severity, f"{cluster.display}:{cluster.line(f.loc)} {f.path}"
                                    + (f" ({f.subject})" if f.subject else ""), f.message, f.expected, f.actual,
                                    f.hint] for f in findings]))
    else:
        out.append("No findings.")
    if topology:
        out += ["", "## Topology", "", markdown_table(
            ["switch", "port", "host", "nic", "address", "speed"],
            [[c.switch, c.port, c.host, c.nic, c.address, f"{c.speed_gbps:g}G"] for c in cabling(cluster)])]
        if cluster.topology.isls:
            out += ["", "## Inter-switch links", "", markdown_table(ISL_HEADER, _isl_rows(cluster))]
    out += ["", "## Bill of materials", "", markdown_table(
        ["part", "model", "qty", "notes"], [[r.part, r.model, r.qty, r.notes] for r in bill_of_materials(cluster)])]
    out += ["", "## Bandwidth budget", "", *_budget_lines(budget)]
    return "\n".join(out) + "\n"


@app.command(epilog=EXIT_CODES_HELP)
def check(
    inventory: Path = INVENTORY_ARG,
    fmt: CheckFormat = typer.Option(CheckFormat.table, "--format", "-f", envvar="RACFG_FORMAT",
                                    help="Output format."),
    strict: bool = typer.Option(False, "--strict", envvar="RACFG_STRICT", help="Warnings also exit 1."),
    topology: bool = typer.Option(True, "--topology/--no-topology", envvar="RACFG_TOPOLOGY",
                                  help="Include the switch -> port -> host NIC list."),
) -> None:
    """Check an inventory against the reference architecture's rules.

    Prints the findings (each with file:line and field path), a topology summary, a bill of
    materials and the bandwidth budget. Exit 0 when there are no errors, 1 with RA violations,
    2 when the file itself is invalid: not YAML, larger than 32 MiB, nested deeper than 64 levels
    or more than 2,000,000 values with its aliases expanded, a key the schema does not know, or a
    value that is not data (a control character, a Jinja marker, a vars name Ansible or racfg
    reserves; docs/inventory.md, "Values racfg refuses").
    """
    cluster = opts.inventory("check", inventory)
    findings = evaluate(cluster)
    budget = bandwidth_budget(cluster)
    if fmt is CheckFormat.json:
        document = {
            "site": cluster.name,
            "file": cluster.display,
            "findings": [finding_dict(cluster, f) for f in findings],
            "topology": [c.__dict__ for c in cabling(cluster)] if topology else None,
            "isls": [{"leaf": i.leaf, "leaf_port": i.leaf_port, "leaf_address": str(i.leaf_address or "") or None,
                      "spine": i.spine, "spine_port": i.spine_port,
                      "spine_address": str(i.spine_address or "") or None, "speed_gbps": i.speed_gbps}
                     for i in cluster.topology.isls] if topology else None,
            "bom": [r.__dict__ for r in bill_of_materials(cluster)],
            "budget": budget.as_dict(),
            "summary": {
                "errors": sum(f.severity == "error" for f in findings),
                "warnings": sum(f.severity == "warning" for f in findings),
                "hosts": len(cluster.hosts),
                "switches": len(cluster.switches),
            },
        }
        typer.echo(json.dumps(document, indent=2))
    elif fmt is CheckFormat.md:
        typer.echo(_markdown(cluster, findings, budget, topology), nl=False)
    else:
        _print_table(cluster, findings, budget, topology)
    failing = [f for f in findings if f.severity == "error" or strict]
    raise typer.Exit(int(ExitCode.FINDINGS) if failing else int(ExitCode.OK))


@app.command(epilog=EXIT_CODES_HELP)
def render(
    inventory: Path = INVENTORY_ARG,
    out: Path = typer.Option(..., "--out", "-o", envvar="RACFG_RENDER_OUT",
                             help="Directory to write hosts.yml, group_vars/, host_vars/ and fabric.md into."),
    force: bool = typer.Option(False, "--force", envvar="RACFG_FORCE", help="Render even with policy errors."),
) -> None:
    """Render the Ansible inventory, its variables and the fabric document.

    The output is deterministic (same inventory, same bytes, whether or not a lab of the site is
    up) and usable directly with ``ansible-playbook -i OUT/hosts.yml``. Refuses an inventory with
    policy errors unless --force.

    OUT/.racfg-rendered.json lists what racfg wrote there: a file no longer rendered is removed only
    if racfg wrote it and nobody changed it since; others are kept and named. An OUT that is a
    symbolic link, or a link where racfg would write (host_vars/, a file), or a file there that racfg
    did not write, is refused (exit 2): racfg never writes through a link.
    """
    cluster = opts.inventory("render", inventory)
    errors = [f for f in evaluate(cluster) if f.severity == "error"]
    if errors and not force:
        for f in errors:
            typer.echo(f"ERROR   {finding_text(cluster, f)}", err=True)
        typer.echo(f"racfg: {len(errors)} policy error(s); not rendered (use --force to render anyway)", err=True)
        raise typer.Exit(int(ExitCode.FINDINGS))
    if out.is_symlink():  # before writable_dir, which would write its probe through it
        opts.refuse("render", "--out", out, "is a symbolic link: racfg does not write through links",
                    hint="give the directory it points to, or another one")
    opts.writable_dir("render", "--out", out)
    done = write_rendered(cluster, out)
    for rel in done.removed:
        say(f"removed {rel}: no longer rendered (racfg wrote it, unchanged since)")
    for line in [*done.replaced, *done.kept]:
        say(line, "yellow")
    say(f"rendered {cluster.name} into {out} ({len(done.written)} file(s) changed; what racfg wrote there: "
        f"{out / MANIFEST})")


@app.command()
def schema() -> None:
    """Print the inventory's JSON Schema (for editors: yaml-language-server, VS Code)."""
    document = Inventory.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "racfg inventory"
    typer.echo(json.dumps(document, indent=2, sort_keys=True))


@app.command("rules")
def list_rules() -> None:
    """List the reference-architecture rules `racfg check` applies."""
    print_table(None, ["rule", "what it checks"], [[r.name, r.summary] for r in RULES])
