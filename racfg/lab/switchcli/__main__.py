"""``python -m racfg.lab.switchcli --config cli.json``: one emulated switch, until SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from racfg.lab.switchcli.config import CliConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="racfg.lab.switchcli", description=__doc__)
    parser.add_argument("--config", required=True, help="cli.json written by racfg lab up")
    args = parser.parse_args(argv)
    try:
        cfg = CliConfig.load(args.config)
    except (OSError, ValueError, KeyError) as exc:
        print(f"switchcli: cannot load {args.config}: {exc}", file=sys.stderr)
        return 2
    from racfg.lab.switchcli.server import serve

    async def run() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await serve(cfg)

    try:
        asyncio.run(run())
    except OSError as exc:
        print(f"switchcli {cfg.name}: cannot listen on {cfg.listen}:{cfg.ssh_port}: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
