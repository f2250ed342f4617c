"""``python -m racfg_lab.switchcli --config cli.json``: one emulated switch, until SIGTERM.

``--fork --config a/cli.json --config b/cli.json ...`` starts several: this process loads the CLI once,
forks one child per file (each enters its switch's namespace, logs to its state directory's cli.log
and serves until SIGTERM), prints ``{"switch": pid, ...}`` and exits; the children share what was
loaded (racfg_lab.switchcli.namespace says why)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import signal
import sys

from racfg_lab.switchcli.config import CliConfig


def _serve(cfg: CliConfig) -> int:
    from racfg_lab.switchcli.server import serve

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


def _child(cfg: CliConfig) -> int:
    """In a forked child: a session of its own, its log, its namespace, then the switch."""
    os.setsid()
    log = os.open(cfg.state_dir / "cli.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    if cfg.netns:
        from racfg_lab.switchcli.namespace import enter

        try:
            enter(cfg.netns)
        except OSError as exc:
            print(f"switchcli {cfg.name}: cannot enter namespace {cfg.netns}: {exc}", file=sys.stderr)
            return 3
    return _serve(cfg)


def _fork_all(configs: list[CliConfig]) -> int:
    import racfg_lab.switchcli.server  # noqa: F401  (loaded before the forks: the children share it)

    gc.freeze()  # the collector would otherwise touch, and so copy, every shared object in each child
    pids = {}
    for cfg in configs:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                code = _child(cfg)
            finally:
                os._exit(code)
        pids[cfg.name] = pid
    print(json.dumps(pids))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="racfg_lab.switchcli", description=__doc__)
    parser.add_argument("--config", required=True, action="append", help="cli.json written by racfg lab up")
    parser.add_argument("--fork", action="store_true", help="one child per --config, each in its namespace")
    args = parser.parse_args(argv)
    configs = []
    for path in args.config:
        try:
            configs.append(CliConfig.load(path))
        except (OSError, ValueError, KeyError) as exc:
            print(f"switchcli: cannot load {path}: {exc}", file=sys.stderr)
            return 2
    if args.fork:
        return _fork_all(configs)
    if len(configs) > 1:
        parser.error("several --config need --fork")
    return _serve(configs[0])


if __name__ == "__main__":
    sys.exit(main())
