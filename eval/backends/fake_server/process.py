"""The fake server in a process of its own: `spawn` starts it and yields its URL, and `main` is
`python -m eval.backends.fake_server` (prints `READY <url>`, stops when its parent dies)."""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import subprocess
import sys
from typing import Iterator

from eval.backends import fake_server
from eval.backends.fake_server.api import ReplyFn, echo_reply
from eval.backends.fake_server.faults import Faults
from eval.backends.fake_server.server import FakeServer


def load_reply(spec: str) -> ReplyFn:
    """`module:function` -> the function (the subprocess's way of receiving a reply script)."""
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"reply must look like module:function, got {spec!r}")
    return getattr(importlib.import_module(module), attr)


@contextlib.contextmanager
def spawn(
    *,
    reply: str | None = None,
    latency_s: float = 0.0,
    faults: str = "",
    seed: int = 0,
    lifetime_s: float = 600.0,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run the server in its own process (its own core and GIL: the benchmark needs that) and
    yield its root URL; the process is stopped on exit."""
    cmd = [sys.executable, "-m", "eval.backends.fake_server", "--latency", str(latency_s),
           "--seed", str(seed), "--lifetime", str(lifetime_s)]
    if reply:
        cmd += ["--reply", reply]
    if faults:
        cmd += ["--faults", faults]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("READY "):
            raise RuntimeError(f"fake server did not start (said {line!r})")
        yield line.split()[1]
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.backends.fake_server",
                                description=fake_server.__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    p.add_argument("--faults", default="", help="e.g. 429=0.1,500=0.1,timeout=0.1,hold=2")
    p.add_argument("--reply", default=None, help="module:function returning the reply text (default: echo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=600.0, help="stop after this many seconds")
    args = p.parse_args(argv)
    try:
        server = FakeServer(load_reply(args.reply) if args.reply else echo_reply, latency_s=args.latency,
                            faults=Faults.parse(args.faults), seed=args.seed, port=args.port,
                            lifetime_s=args.lifetime)
    except (ValueError, ImportError, AttributeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    parent = os.getppid()

    async def run() -> None:
        async def orphan_watch() -> None:
            while os.getppid() == parent:
                await asyncio.sleep(1.0)
            server.stop_soon()

        task = None

        def ready() -> None:
            nonlocal task
            print(f"READY {server.url}", flush=True)
            task = asyncio.get_running_loop().create_task(orphan_watch())

        await server.serve(on_ready=ready)

    asyncio.run(run())
    return 0
