"""Throughput of the HTTP backends against the local fake server (not a test; run it by hand).

    python -m tomsynth.bench_throughput                      # 27,648 requests, concurrency 64, 200 ms
    python -m tomsynth.bench_throughput --requests 3000 --kind anthropic --cache /tmp/c.sqlite

The requests are the real ToM-Synth-27K synthesis prompts (6,912 units x 4 entries); the server,
in its own process, answers each after a fixed latency with the prompt echoed back. The ideal wall
time is requests x latency / concurrency; the figure of merit is ideal / measured (goal >= 90%).
The machine's load average is printed with the result because the client and the server share
its cores with whatever else runs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

from eval.backends import GenerationConfig, load_backend
from eval.backends.fake_server.process import spawn
from eval.cli_common import positive_int
from tomsynth.prompts import synthesis_messages
from tomsynth.units import units


def prompts(n: int) -> list[list[dict[str, str]]]:
    out = []
    all_units = units("main")
    k = 0
    while len(out) < n:
        out += [synthesis_messages(u, k) for u in all_units[: n - len(out)]]
        k += 1
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tomsynth.bench_throughput", description=__doc__.split("\n")[0])
    p.add_argument("--requests", type=positive_int, default=27648)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency", type=float, default=0.2, help="server seconds per reply")
    p.add_argument("--kind", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--cache", default=None, help="response cache path (default: no cache)")
    p.add_argument("--json", default=None, help="also write the result here")
    args = p.parse_args(argv)

    batch = prompts(args.requests)
    os.environ.setdefault("BENCH_DUMMY_KEY", "dummy-key-for-local-server")
    load_before = os.getloadavg()
    with spawn(latency_s=args.latency, lifetime_s=3600) as url:
        backend = load_backend(args.kind, "bench", base_url=url + ("/v1" if args.kind == "openai" else ""),
                               api_key_env="BENCH_DUMMY_KEY", concurrency=args.concurrency, cache=args.cache,
                               timeout_s=60)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        out = backend.generate(batch, GenerationConfig(max_new_tokens=16), progress=sys.stderr.isatty())
        wall = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        backend.close()
    load_after = os.getloadavg()
    ideal = args.requests * args.latency / args.concurrency
    client_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    result = {
        "requests": args.requests, "concurrency": args.concurrency, "latency_s": args.latency,
        "kind": args.kind, "cache": bool(args.cache), "ok": sum(c.ok for c in out),
        "cached": sum(c.cached for c in out), "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
        "efficiency": round(ideal / wall, 4), "requests_per_s": round(args.requests / wall, 1),
        "client_cpu_ms_per_request": round(1000 * client_cpu / args.requests, 3),
        "cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
    }
    print(f"{args.requests} requests at concurrency {args.concurrency}, {1000 * args.latency:g} ms latency "
          f"({args.kind}{', cache on' if args.cache else ''}): wall {wall:.1f} s vs ideal {ideal:.1f} s "
          f"= {100 * ideal / wall:.1f}% of ideal throughput ({args.requests / wall:.0f} req/s; client "
          f"{result['client_cpu_ms_per_request']} ms CPU per request; load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after, {os.cpu_count()} cores)")
    if result["ok"] != args.requests:
        print(f"warning: {args.requests - result['ok']} requests failed", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
