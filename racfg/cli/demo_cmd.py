"""``racfg demo``: the main job end to end on the virtual lab (what `make demo` runs)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import typer

from racfg.cli.app import app
from racfg.cli.deploy_cmd import RecapFormat, refuse_policy_errors, report
from racfg.cli.inventory_cmd import INVENTORY_ARG
from racfg.cli.providers import announce_substitutions, overrides_for
from racfg.console import print_table, say
from racfg.deploy.command import DeployOptions, run_deploy
from racfg.errors import EXIT_CODES_HELP, ExitCode
from racfg.inventory import Cluster, load_cluster


def jumbo_checks(cluster: Cluster) -> list[list[str]]:
    """From every dgx host, a don't-fragment ping at the full host MTU to every storage data address."""
    from racfg.lab import lab_exec

    rows = []
    size = cluster.fabric.effective_host_mtu - 28
    for dgx in cluster.role("dgx"):
        for storage in cluster.role("storage"):
            for nic in storage.nics:
                result = lab_exec(cluster.name, dgx.name,
                                  ["ping", "-M", "do", "-c", "1", "-W", "2", "-s", str(size), str(nic.address.ip)])
                ok = result.returncode == 0
                rows.append([dgx.name, f"{storage.name}:{nic.name}", str(nic.address.ip), f"{size + 28}",
                             "pass" if ok else "FAIL"])
    return rows


def lab_passwords_for_unset_env(cluster: Cluster) -> tuple[list[str], list[str]]:
    """Fill each unset ``password_env`` of the inventory's switches with the lab switch's generated password,
    in this process only, and say so. Returns the substitution lines and, for the other commands,
    the shell line that exports each such variable from the lab's password file.

    An example written for real switches names an environment variable for each switch password;
    the lab's switch accepts only the password the lab generated, and the product never replaces
    an inventory's own credential source. `racfg demo` is the one command meant to run any
    inventory on the lab as is, so it, not the product, hands the lab's password to the variable;
    for validate, drift and smoke the user sets the variable, and the exact line is printed at the
    end so that nobody has to find the variable's name or the lab's password file.
    """
    from racfg.lab import switch_password
    from racfg.lab.state import site_dir
    from racfg.lab.switches import switch_dir

    lines, exports = [], []
    for name, switch in cluster.switches.items():
        var = switch.spec.credentials.password_env
        if var and not os.environ.get(var):
            os.environ[var] = switch_password(cluster.name, name)
            lines.append(f"switch {name} password: {var} is not set: this run uses the lab switch's generated "
                         "password")
            exports.append(f"export {var}=$(cat {switch_dir(site_dir(cluster.name), name) / 'password'})")
    return lines, exports


@app.command(epilog=EXIT_CODES_HELP)
def demo(
    inventory: Path = INVENTORY_ARG,
    keep: bool = typer.Option(True, "--keep/--down", envvar="RACFG_DEMO_KEEP",
                              help="Leave the lab up afterwards to explore it (default), or remove it."),
) -> None:
    """Build the virtual lab of INVENTORY, deploy the reference architecture onto it, summarise.

    Runs `racfg lab up`, `racfg deploy --yes` and a jumbo-frame check from every GPU server to
    every storage node. Safe to run again: the lab is reused and the deploy changes nothing.
    What the lab replaces (inbox OFED for MLNX_OFED, unchecked drive models, Ethernet stand-ins
    for InfiniBand NICs) is printed before the deploy and kept in its run record.
    """
    from racfg import lab

    cluster = load_cluster(inventory)
    refuse_policy_errors(cluster, force=False)
    say(f"== 1/3 lab up {inventory}")
    built = lab.up(inventory, progress=lambda text: say(f"lab: {text}"))
    say(f"lab {cluster.name}: " + ("built" if built.changed else "already up, reused"))
    overrides = overrides_for(cluster)
    password_lines, exports = lab_passwords_for_unset_env(cluster)
    overrides = replace(overrides, substitutions=(*overrides.substitutions, *password_lines))
    announce_substitutions(overrides)
    say(f"== 2/3 deploy {inventory}")
    outcome = run_deploy(cluster, DeployOptions(), overrides=overrides)
    report(outcome, RecapFormat.table, show_diff=False)
    say("== 3/3 jumbo frames end to end (ping -M do at the host MTU, dgx -> storage)")
    rows = jumbo_checks(cluster) if outcome.exit_code == ExitCode.OK else []
    if rows:
        print_table(None, ["from", "to", "address", "bytes", "result"], rows)
    failed = [r for r in rows if r[-1] != "pass"]
    totals = outcome.totals
    say("")
    say(f"summary: {len(cluster.hosts)} hosts and {len(cluster.switches)} switch(es) deployed: "
        f"changed={totals['changed']} failed={totals['failed']} unreachable={totals['unreachable']}; "
        f"jumbo frames {len(rows) - len(failed)}/{len(rows)} paths pass")
    if keep:
        say(f"the lab stays up: `racfg lab status {inventory}`, `racfg lab exec dgx01 -- ip -br addr`, "
            f"and `racfg lab down {inventory}` (or `make demo-down`) to remove it")
        if exports:
            say("before `racfg validate`, `drift`, `smoke` or `deploy` on this lab, set the switch password "
                "variable(s) the inventory names: " + "; ".join(exports))
    else:
        lab.down(inventory)
        say("lab removed")
    code = outcome.exit_code if outcome.exit_code != ExitCode.OK else (ExitCode.FINDINGS if failed else ExitCode.OK)
    raise typer.Exit(int(code))
