"""``racfg lab``: build, inspect, poke and remove the virtual lab of an inventory.

The commands come with the lab package: racfg's cli/lab_cmd.py adds ``lab_app`` to the ``racfg``
app when this package is installed (and says how to install it when it is not).
"""

from __future__ import annotations

import json
import subprocess
import sys
from enum import StrEnum

import typer

from racfg.cli import options as opts
from racfg.console import print_table, say
from racfg.errors import EXIT_CODES_HELP, UsageError
from racfg.inventory import load_cluster
from racfg_lab import api, lifecycle, prereq, status
from racfg_lab.fabric import DEFAULT_SCALE_MBIT_PER_100G, LAB_CARRIES_MBIT
from racfg_lab.state import known_sites, load_state
from racfg_lab.teardown import leftovers, teardown_all

lab_app = typer.Typer(
    name="lab",
    help=(
        "The virtual lab: an inventory's hosts (systemd-nspawn machines with real systemd and sshd), "
        "switches (network namespaces with a bridge and the switch CLI) and cables (veth pairs shaped "
        "to a lab line rate) built on this machine, as containerlab does for routers. Needs root, "
        "systemd-nspawn and debootstrap. Lab traffic never leaves this machine.\n\n" + EXIT_CODES_HELP
    ),
    no_args_is_help=True,
    rich_markup_mode="markdown",
)

INVENTORY = typer.Argument(..., help="Inventory YAML file (e.g. inventory/lab.yaml).", envvar="RACFG_INVENTORY",
                           show_default=False)
SITE_INVENTORY = typer.Option(None, "--inventory", "-i", envvar="RACFG_INVENTORY", show_default=False,
                              help="Inventory of the lab (default: the only lab that is up).")
SITE = typer.Option(None, "--site", envvar="RACFG_LAB_SITE", show_default=False,
                    help="Site name of the lab, instead of --inventory.")


class StatusFormat(StrEnum):
    table = "table"
    json = "json"


def _site(inventory: str | None, site: str | None) -> str:
    if site:
        return site
    if inventory:
        return load_cluster(inventory).name
    sites = known_sites()
    if len(sites) == 1:
        return sites[0]
    if not sites:
        raise UsageError("no lab is up", hint="racfg lab up INVENTORY")
    raise UsageError(f"several labs are up ({', '.join(sites)}): say which with --site or --inventory")


def _lab_of(command: str, inventory: str | None, site: str | None, argument: str, names: list[str],
            switches: bool = True) -> str:
    """The site of the lab a subcommand acts on, after refusing a lab that is not up or a node it
    does not have; each refusal names the subcommand."""
    with opts.refusals_of(f"lab {command}"):
        name = _site(inventory, site)
        state = api.require_lab(name)
    if switches:
        machines = [m.name for m in state.machines()]  # the hosts and the Slurm controller, if any
        opts.one_of(f"lab {command}", argument, names, [*machines, *state.switches], "lab host or switch",
                    "lab hosts and switches")
    else:
        opts.one_of(f"lab {command}", argument, names, state.hosts, "lab host")
    return name


def _progress(text: str) -> None:
    typer.echo(f"lab: {text}", err=True)


@lab_app.command("up")
def up_cmd(
    inventory: str = INVENTORY,
    scale: int | None = typer.Option(
        None, "--scale", envvar="RACFG_LAB_SCALE", min=1, show_default=False,
        help=f"Lab line rate in Mbit/s per 100G declared: 100G ports are shaped to this. Default "
             f"{DEFAULT_SCALE_MBIT_PER_100G}, less where smoke's largest load would need more than the lab's data "
             f"plane carries at once ({LAB_CARRIES_MBIT} Mbit/s)."),
) -> None:
    """Build the lab of INVENTORY: image (cached), package repository (cached), networks, machines,
    and the inventory's Slurm (slurmctld on its controller machine, slurmd on every host) when it declares one.

    Idempotent: when the lab is already up from the same inventory nothing changes (a host stopped
    with `racfg lab stop` is started again). On failure everything made so far is removed and the
    failed step is named.
    """
    result = lifecycle.up(inventory, scale_mbit_per_100g=scale, progress=_progress)
    state = result.state
    assert state is not None
    key = api.ssh_key_path(state.site)
    say(f"lab {state.site}: {len(state.hosts)} hosts, {len(state.switches)} switches, {len(state.cables)} cables"
        + ("" if result.changed else " (already up, nothing changed)"))
    say(f"  ssh -F {key.parent / 'config'} {next(iter(state.hosts))}   # or: ssh -i {key} root@ADDRESS")
    if state.controller is not None:
        say(f"  Slurm: slurmctld on {state.controller.name} ({state.controller.mgmt}), slurmd on every host: "
            f"ssh -F {key.parent / 'config'} {state.controller.name} sinfo")
    if state.fabric == "infiniband":
        say(f"  note: {status.RDMA_NOTE}")


@lab_app.command("down")
def down_cmd(
    inventory: str = typer.Argument(None, help="Inventory of the lab to remove.", show_default=False),
    all_labs: bool = typer.Option(False, "--all", help="Remove every racfg lab on this machine, even strays "
                                  "whose state file is gone."),
    site: str = SITE,
) -> None:
    """Remove a lab: machines, namespaces, veths, bridges, mounts, loop devices and processes."""
    prereq.require()
    if all_labs:
        removed = teardown_all() + lifecycle.restore_limits()
        left = leftovers(None)
    else:
        if not inventory and not site:
            raise UsageError("lab down: give the lab's INVENTORY, --site NAME, or --all")
        removed = lifecycle.down(inventory, site=site)
        left = leftovers(site or load_cluster(inventory).name)
    say(f"lab down: removed {len(removed)} resources" if removed else "lab down: nothing to remove")
    if left:
        for item in left:
            typer.echo(f"racfg: could not remove {item}", err=True)
        raise typer.Exit(3)


@lab_app.command("status")
def status_cmd(
    inventory: str = INVENTORY,
    fmt: StatusFormat = typer.Option(StatusFormat.table, "--format", envvar="RACFG_FORMAT", help="Output format."),
) -> None:
    """Nodes (up/down, management address, SSH reachable, Slurm state where the lab runs Slurm), cables (rate, MTU
    both ends, carrier), resources."""
    site = opts.inventory("lab status", inventory).name
    state = load_state(site)
    if state is None:
        if fmt is StatusFormat.json:
            typer.echo(json.dumps({"site": site, "up": False}))
        else:
            say(f"lab {site}: down")
        raise typer.Exit(0)
    st = status.collect(state)
    if fmt is StatusFormat.json:
        typer.echo(json.dumps(st.to_dict(), indent=2))
        return
    yes = {True: "yes", False: "no"}
    slurm = ["slurm"] if st.scheduler else []  # a column only where the lab runs Slurm
    print_table(f"lab {site} nodes", ["node", "kind", "state", "mgmt", "ssh", "memory MiB", *slurm],
                [[n.name, n.kind, n.state, n.mgmt, yes[n.ssh], f"{n.memory_mib:.0f}",
                  *([n.slurm or "-"] if slurm else [])] for n in st.nodes])
    def mbit(value: float | None) -> str:
        return f"{value:.0f}" if value else "-"

    print_table(f"lab {site} cables", ["host", "nic", "switch", "port", "rate Mbit/s to host/to switch",
                                        "MTU host/switch", "carrier host/switch", "port admin", "wiring"],
                [[c.host, c.nic, c.switch, c.port, f"{mbit(c.rate_mbit)}/{mbit(c.host_rate_mbit)}",
                  f"{c.host_mtu}/{c.switch_mtu}", f"{'up' if c.host_carrier else 'down'}/"
                  f"{'up' if c.switch_carrier else 'down'}", "up" if c.switch_admin_up else "shutdown",
                  f"swapped with {c.swapped_with}" if c.swapped_with else "as inventory"]
                 for c in st.cables])
    say(f"resources: {st.memory_mib:.0f} MiB memory (PSS), {st.disk_mib:.0f} MiB disk in the site directory")
    for note in st.notes:
        say(f"note: {note}")


@lab_app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_cmd(
    node: str = typer.Argument(..., help="Lab host, Slurm controller or switch name.", show_default=False),
    command: list[str] = typer.Argument(..., help="Command to run (after --).", show_default=False),
    inventory: str = SITE_INVENTORY,
    site: str = SITE,
) -> None:
    """Run a command inside a lab host (its namespaces, as root) or a switch namespace:
    `racfg lab exec dgx01 -- ip -br addr`. Exits with the command's exit code."""
    name = _lab_of("exec", inventory, site, "NODE", [node])
    argv = api.exec_argv(api.require_lab(name), node, command)
    raise typer.Exit(subprocess.call(argv, stdin=sys.stdin if not sys.stdin.isatty() else None))


@lab_app.command("link")
def link_cmd(
    node: str = typer.Argument(..., help="Host (with its NIC) or switch (with its port).", show_default=False),
    end: str = typer.Argument(..., help="NIC name (data0) or switch port (1/1).", show_default=False),
    down: bool = typer.Option(False, "--down", help="Shut the switch port: both ends lose carrier."),
    up: bool = typer.Option(False, "--up", help="Bring the switch port back up."),
    rate: int = typer.Option(None, "--rate", min=1, help="New lab line rate in Mbit/s, both directions "
                             "(tbf on the switch port and on the host NIC)."),
    mtu: int = typer.Option(None, "--mtu", min=68, help="Switch port MTU, set on the data plane directly."),
    inventory: str = SITE_INVENTORY,
    site: str = SITE,
) -> None:
    """Fault injection on a cable: `racfg lab link dgx01 data0 --down`, `racfg lab link sw1 1/1 --mtu 9000`."""
    if down and up:
        raise UsageError("lab link: give --down or --up, not both")
    if not (down or up or rate or mtu):
        raise UsageError("lab link: nothing to do: give --down, --up, --rate or --mtu")
    name = _lab_of("link", inventory, site, "NODE", [node])
    with opts.refusals_of("lab link"):
        cable = api.set_link(name, node, end, up=True if up else (False if down else None),
                             rate_mbit=rate, mtu=mtu)
    say(f"cable {cable.host}:{cable.nic} - {cable.switch}:{cable.port} updated")


@lab_app.command("stop")
def stop_cmd(host: str = typer.Argument(..., show_default=False, help="Lab host to power off."),
             inventory: str = SITE_INVENTORY, site: str = SITE) -> None:
    """Power a lab host off (its NICs, drives and address stay, like a powered-off server)."""
    name = _lab_of("stop", inventory, site, "HOST", [host], switches=False)
    api.stop_host(name, host)
    say(f"{host}: stopped")


@lab_app.command("start")
def start_cmd(host: str = typer.Argument(..., show_default=False, help="Lab host to boot."),
              inventory: str = SITE_INVENTORY, site: str = SITE) -> None:
    """Boot a stopped lab host and wait until its SSH answers."""
    name = _lab_of("start", inventory, site, "HOST", [host], switches=False)
    api.start_host(name, host)
    say(f"{host}: started, SSH answering")


def _host_nic(text: str) -> tuple[str, str]:
    host, sep, nic = text.partition(":")
    if not sep or not host or not nic:
        raise UsageError(f"lab swap: {text!r}: give a cable as HOST:NIC (inventory names), e.g. dgx01:data0")
    return host, nic


@lab_app.command("swap")
def swap_cmd(
    first: str = typer.Argument(..., help="One cable by its host end: HOST:NIC (dgx01:data0).", show_default=False),
    second: str = typer.Argument(..., help="The other cable: HOST:NIC.", show_default=False),
    undo: bool = typer.Option(False, "--undo", help="Put two swapped cables back into their inventory ports."),
    inventory: str = SITE_INVENTORY,
    site: str = SITE,
) -> None:
    """Cabling fault: swap the switch ends of two cables (`racfg lab swap dgx01:data0 stor01:data0`).

    Each host keeps its NIC and addresses; each switch port keeps its MTU, admin state and rate;
    LLDP on both ends reports the new wiring within seconds. Swapping the same two cables again, or
    `--undo`, puts them back. `racfg lab status` shows swapped cables."""
    a, b = _host_nic(first), _host_nic(second)
    name = _lab_of("swap", inventory, site, "HOST:NIC", [a[0], b[0]], switches=False)
    with opts.refusals_of("lab swap"):
        ca, cb = api.unswap_cables(name, a, b) if undo else api.swap_cables(name, a, b)
    for cable in (ca, cb):
        state = f"swapped with {cable.swapped_with}" if cable.swapped_with else "as in the inventory"
        say(f"cable {cable.key} - {cable.switch}:{cable.port} ({state})")


@lab_app.command("cut")
def cut_cmd(
    switch: str = typer.Argument(..., help="Lab switch whose next configuring session is cut.", show_default=False),
    after: int = typer.Option(..., "--after", min=1, help="Config lines into the session: the switch executes "
                              "this one and never answers it.", show_default=False),
    hang: bool = typer.Option(False, "--hang", help="Keep the connection open and answer nothing more "
                              "(a timeout), instead of dropping it."),
    inventory: str = SITE_INVENTORY,
    site: str = SITE,
) -> None:
    """Session fault on a switch: `racfg lab cut sw1 --after 5` drops the next SSH session that types
    its 5th line in config mode, right after executing it (`--hang`: it goes silent instead). Fires once."""
    name = _lab_of("cut", inventory, site, "SWITCH", [switch])
    opts.one_of("lab cut", "SWITCH", [switch], api.require_lab(name).switches, "lab switch", "lab switches")
    with opts.refusals_of("lab cut"):
        api.cut_switch_session(name, switch, after, hang=hang)
    say(f"{switch}: the next session to type {after} config line(s) is {'hung' if hang else 'dropped'} at the last")
