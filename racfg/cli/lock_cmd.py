"""``racfg lock show|break``: the site lock that deploy, drift and smoke take, seen from any controller.

The lock lives on the site's lock host (racfg.lock.site_lock), so a run from another checkout or
another machine shows here too. A holder whose racfg died releases the lock by itself (its SSH
session ends, or its heartbeat stops and the lease runs out); ``break`` is for the holder that
lingers, and for an operator who must end a live one (``--force``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from racfg.cli.app import app
from racfg.cli.options import INVENTORY_ARG
from racfg.cli.providers import overrides_for
from racfg.errors import CannotRunError
from racfg.inventory import load_cluster

lock_app = typer.Typer(
    name="lock",
    help=("The site lock: one deploy per site at a time (drift, `deploy --check` share it as readers; smoke "
          "takes it whole), held on the site's lock host (site.lock_host, else its first host) in "
          "/run/lock/racfg/, a directory only root may use, so every checkout and controller sees it. "
          "A run whose lock is lost stops (exit 3); a stopped deploy ends its module processes on the "
          "hosts before it lets the lock go."),
    no_args_is_help=True,
)
app.add_typer(lock_app, name="lock")


@lock_app.command("show")
def show(inventory: Path = INVENTORY_ARG) -> None:
    """Say who holds the site's lock (controller, user, pid, start, command), and which holders are stale.

    A holder file that cannot be read (torn, not JSON) or that racfg did not write (a symbolic link,
    another owner, a stray name) is shown as "unreadable holder file PATH: why". Read-only. Exit
    codes: 0 shown (held or free); 2 invalid inventory; 3 the lock host cannot be reached, or its
    lock directory is not root's alone (named).
    """
    from racfg.lock.site_lock import show as read_lock

    cluster = load_cluster(inventory)
    host, listed = read_lock(cluster, overrides_for(cluster))
    holders = [h for h in listed if not h.planted]
    if not holders:
        typer.echo(f"site {cluster.name}: lock free (on {host})")
    else:
        typer.echo(f"site {cluster.name}: lock on {host} held by:")
    for holder in holders:
        typer.echo(f"  {holder.describe()}")
    for file in listed:
        if file.planted:
            typer.echo(f"  {file.describe()}")


@lock_app.command("break")
def break_lock(
    inventory: Path = INVENTORY_ARG,
    force: bool = typer.Option(False, "--force", help="Also end holders that are still live (a run then goes on "
                                                      "without the lock: only when you know it is hung)."),
) -> None:
    """End the stale holders of the site's lock on its lock host, saying what each one was.

    A holder is stale when its shell on the lock host is gone, its controller's heartbeat stopped,
    or its racfg on this controller is dead. A file racfg did not write is left, named: remove it by
    hand once you know who put it there. Exit codes: 0 nothing left holding the lock; 2 invalid
    inventory; 3 the lock host cannot be reached, or live holders remain (without --force).
    """
    from racfg.lock.site_lock import break_holders
    from racfg.lock.site_lock import show as read_lock

    cluster = load_cluster(inventory)
    overrides = overrides_for(cluster)
    host, listed = read_lock(cluster, overrides)
    planted = [h for h in listed if h.planted]
    holders = [h for h in listed if not h.planted]
    doomed = [h for h in holders if force or h.stale_reason]
    live = [h for h in holders if h not in doomed]
    if not holders:
        typer.echo(f"site {cluster.name}: lock free (on {host}); nothing to break")
    if doomed:
        ended = set(break_holders(cluster, overrides, doomed))
        for holder in doomed:
            how = (f"ended its shell pid {holder.shell_pid} on {host}" if holder.shell_pid in ended
                   else f"removed its leftover holder file on {host}")
            typer.echo(f"broke: {holder.describe()}: {how}")
    for file in planted:
        typer.echo(f"left: {file.describe()}")
    if live:
        raise CannotRunError(f"site {cluster.name}: not broken, still live: "
                             + "; ".join(h.describe() for h in live),
                             hint="wait for it to finish, or pass --force if you know it is hung")
