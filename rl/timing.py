"""Throughput of a GRPO run from its `log.jsonl`: step time split into generation and training.

    python -m rl.timing runs/grpo/tiny-cpu/log.jsonl [--skip 2]

Uses TRL's `step_time` (one optimizer step, generation included) and `num_tokens` (prompt and
completion tokens seen, all processes), and rl.train's `timing/generation_s` (wall time of
generation on the first process). Training time is step time minus generation time. The first
`--skip` logged steps (warm-up: compilation, caches, allocator) are left out.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eval.jsonl import InputError, numbered_records
from eval.paths import describe_error


class TimingError(ValueError):
    pass


def summarize(records: list[dict], skip: int = 1) -> dict[str, float]:
    steps = [r for r in records if "step_time" in r and "num_tokens" in r]
    if len(steps) < skip + 2:
        raise TimingError(f"need at least {skip + 2} logged training steps (have {len(steps)}); "
                          "log every step (--logging_steps 1) and run a few more")
    steps = steps[skip:]
    measured = steps[1:]  # the first kept record is the baseline of num_tokens
    spans = [r["step"] - p["step"] for p, r in zip(steps, measured)]
    seconds = sum(r["step_time"] * n for r, n in zip(measured, spans))
    tokens = measured[-1]["num_tokens"] - steps[0]["num_tokens"]
    n_steps = sum(spans)
    step = seconds / n_steps
    gen = [r["timing/generation_s"] for r in measured if "timing/generation_s" in r]
    out = {"steps": n_steps, "step_s": step, "tokens_per_s": tokens / seconds if seconds else 0.0,
           "completion_mean_tokens": sum(r.get("completions/mean_length", 0) for r in measured) / len(measured)}
    if gen:
        out["generation_s"] = sum(gen) / len(gen)
        out["training_s"] = step - out["generation_s"]
        out["generation_share"] = out["generation_s"] / step
    speeds = [r["timing/generated_tokens_per_s"] for r in measured if "timing/generated_tokens_per_s" in r]
    if speeds:
        out["generated_tokens_per_s_per_process"] = sum(speeds) / len(speeds)
    return out


def read_log(path: Path) -> list[dict]:
    """The records of a log.jsonl of rl.train."""
    try:
        return [record for _, record in numbered_records(path)]
    except InputError as e:
        raise TimingError(str(e)) from None
    except OSError as e:  # no permission, ...
        raise TimingError(describe_error(e)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rl.timing", description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="log.jsonl of a GRPO run (rl.train writes it)")
    parser.add_argument("--skip", type=int, default=1, help="warm-up steps left out (default 1)")
    args = parser.parse_args(argv)
    try:
        records = read_log(args.log)
        try:
            s = summarize(records, args.skip)
        except TimingError as e:
            raise TimingError(f"{e} (file {args.log})") from None
    except TimingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("| steps | step (s) | generation (s) | training (s) | generation share | tokens/s | "
          "generated tokens/s/process | mean completion tokens |")
    print("|---|---|---|---|---|---|---|---|")
    gen = f"{s['generation_s']:.3f}" if "generation_s" in s else "-"
    train = f"{s['training_s']:.3f}" if "training_s" in s else "-"
    share = f"{100 * s['generation_share']:.0f}%" if "generation_share" in s else "-"
    speed = f"{s['generated_tokens_per_s_per_process']:.0f}" if "generated_tokens_per_s_per_process" in s else "-"
    print(f"| {s['steps']} | {s['step_s']:.3f} | {gen} | {train} | {share} | {s['tokens_per_s']:.0f} | "
          f"{speed} | {s['completion_mean_tokens']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
