"""``racfg hostkey show|accept``: the SSH host keys of a site's hosts and switches.

Every SSH connection racfg makes refuses a host or switch whose key the known_hosts files do not
list (racfg.ssh.known_hosts); ``show`` says what each one presents now and what the files say of it,
and ``accept`` records one key after the operator has compared its fingerprint with the one the
machine shows on its own console. Neither ever replaces a known key.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import typer

from racfg.cli.app import app
from racfg.cli.options import INVENTORY_ARG
from racfg.cli.providers import overrides_for
from racfg.errors import CannotRunError, UsageError
from racfg.inventory import Cluster, load_cluster
from racfg.ssh.hostkeys import Peer, accept, survey
from racfg.ssh.known_hosts import KnownHosts

hostkey_app = typer.Typer(
    name="hostkey",
    help=("SSH host keys of the site's hosts and switches: racfg refuses a key its known_hosts files do not list "
          "(the site's file, site.known_hosts, or your ~/.ssh/known_hosts, and /etc/ssh/ssh_known_hosts) and "
          "a key that changed; `show` lists what each presents, `accept` records one you have checked."),
    no_args_is_help=True,
)
app.add_typer(hostkey_app, name="hostkey")

TIMEOUT_OPTION = typer.Option(10.0, "--timeout", min=1.0, help="Seconds to wait for each machine's SSH server.")


def peers(cluster: Cluster, names: list[str]) -> list[Peer]:
    """The inventory's switches and hosts named (all when ``names`` is empty), at their management address."""
    every = [Peer("switch", s.name, s.spec.mgmt, s.spec.ssh_port) for s in cluster.switches.values()]
    every += [Peer("host", h.name, str(h.mgmt), h.ssh_port) for h in cluster.hosts]
    if not names:
        return every
    by_name = {p.name: p for p in every}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise UsageError(f"{cluster.display}: no host or switch named {', '.join(unknown)}",
                         hint="give names of the inventory's hosts or switches")
    return [by_name[n] for n in names]


def known_hosts_for(cluster: Cluster) -> KnownHosts:
    return KnownHosts(cluster.known_hosts_file, overrides_for(cluster).known_hosts)


@hostkey_app.command("show")
def show(
    inventory: Path = INVENTORY_ARG,
    names: list[str] = typer.Argument(None, help="Hosts or switches to show (default: all).", show_default=False),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Show the host key each host and switch presents now (type, SHA256 fingerprint) and whether the
    known_hosts files list it, change nothing.

    Reads each key with an SSH key exchange on the management address; nothing logs in. Exit codes:
    0 every key is known; 2 invalid inventory or unknown name; 3 a key is not known, changed or
    revoked, or a machine cannot be reached.
    """
    cluster = load_cluster(inventory)
    known = known_hosts_for(cluster)
    chosen = peers(cluster, list(names or []))
    with ThreadPoolExecutor(max_workers=min(16, len(chosen) or 1)) as pool:
        results = list(pool.map(lambda p: survey(p, known, timeout), chosen))
    typer.echo(f"known_hosts read: {known.describe()}")
    for _, line in results:
        typer.echo(line)
    refused = [p.name for p, (verdict, _) in zip(chosen, results, strict=True)
               if verdict is None or verdict.status != "known"]
    if refused:
        raise CannotRunError(f"{len(refused)} of {len(chosen)} not known or not reachable: {', '.join(refused)}")


@hostkey_app.command("accept")
def accept_key(
    inventory: Path = INVENTORY_ARG,
    name: str = typer.Argument(..., help="The host or switch of the inventory whose key to record.",
                               show_default=False),
    fingerprint: str = typer.Option(..., "--fingerprint", help="The key's SHA256 fingerprint as the machine shows "
                                                               "it on its own console (SHA256:...).",
                                    show_default=False),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Record the host key NAME presents, once you have checked it is the machine's own.

    Reads the key NAME presents now on its management address (an SSH key exchange; nothing logs
    in), checks that its fingerprint is --fingerprint, which you read on the machine's own console
    (a switch's `show ssh server host-keys`, a host's `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`),
    and appends it to the site's known_hosts file (site.known_hosts) or else to your
    ~/.ssh/known_hosts. A key that differs from a known one is never replaced: delete the old line
    first (`ssh-keygen -R ADDRESS -f FILE`) if the machine was re-keyed on purpose.

    Exit codes: 0 recorded, or already known; 2 bad command line, invalid inventory or unknown name;
    3 NAME cannot be reached, presents a key other than --fingerprint, or one that changed or is revoked.
    """
    cluster = load_cluster(inventory)
    [peer] = peers(cluster, [name])
    typer.echo(accept(peer, known_hosts_for(cluster), fingerprint, timeout))
