"""kill -9 in the middle of `generate` and of `filter`, re-run, and get exactly the dataset an
uninterrupted run builds (nothing lost, nothing duplicated)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from datasets import load_from_disk

from tomsynth import generate
from tomsynth.cli import main
from tomsynth.config import load_config

UNITS = 8  # 32 entries
REPO = Path(__file__).resolve().parents[2]


def _until_ok(*args: str) -> None:
    for _ in range(5):
        if main(list(args)) == 0:
            return
    raise AssertionError(f"{args[0]} kept failing")


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _kill_midway(args: list[str], log: Path, at_least: int, total: int) -> None:
    """Start `python -m tomsynth ARGS`, SIGKILL it once `log` has `at_least` lines, and check
    that it really was stopped part-way."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "tomsynth", *args], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while _lines(log) < at_least and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode() if proc.stderr else ""
    done = _lines(log)
    assert at_least <= done < total, f"killed after {done} of {total} records: not midway"


def test_kill_and_resume_gives_the_uninterrupted_dataset(tmp_path, server, script, fake_key, kit):
    server.latency_s = 0.04  # slow enough to kill the child part-way through
    whole = kit.write_config(tmp_path / "whole.yaml", server, tmp_path / "whole", collections=["main"])
    killed = kit.write_config(tmp_path / "killed.yaml", server, tmp_path / "killed", collections=["main"],
                              generator={**load_config(whole).generator.model_dump(), "concurrency": 2},
                              verifier={**load_config(whole).verifier.model_dump(), "concurrency": 2})
    reqs = generate.requests(load_config(whole), limit_units=UNITS)
    total = len(reqs)
    # a few rejected and non-PASS entries so every stage matters
    script.plan(reqs, defects={reqs[1].entry_id: "bad_letter", reqs[6].entry_id: "prose"},
                judgments={reqs[3].entry_id: "AMBIGUOUS", reqs[9].entry_id: "FALSE"})

    lim = ["--limit-units", str(UNITS), "--quiet"]
    _until_ok("generate", "--config", str(whole), *lim)
    _until_ok("filter", "--config", str(whole), "--quiet")
    _until_ok("build", "--config", str(whole))

    raw = tmp_path / "killed" / "raw" / "shard-000-of-001.jsonl"
    _kill_midway(["generate", "--config", str(killed), *lim], raw, at_least=6, total=total)
    _until_ok("generate", "--config", str(killed), *lim)
    records = [json.loads(line) for line in raw.read_text().splitlines()]
    ok = Counter(r["entry_id"] for r in records if r["ok"])
    assert sorted(ok) == sorted(r.entry_id for r in reqs) and set(ok.values()) == {1}

    verdicts = tmp_path / "killed" / "verify" / "verdicts.jsonl"
    judged = total - 2  # two entries fail stage 1
    _kill_midway(["filter", "--config", str(killed), "--quiet"], verdicts, at_least=4, total=judged)
    _until_ok("filter", "--config", str(killed), "--quiet")
    judged_ok = Counter(json.loads(line)["entry_id"] for line in verdicts.read_text().splitlines()
                        if json.loads(line)["ok"])
    assert len(judged_ok) == judged and set(judged_ok.values()) == {1}
    _until_ok("build", "--config", str(killed))

    a = load_from_disk(str(tmp_path / "whole" / "datasets" / "ToM-Synth-27K"))["train"]
    b = load_from_disk(str(tmp_path / "killed" / "datasets" / "ToM-Synth-27K"))["train"]
    assert len(a) == total - 4
    assert a.to_list() == b.to_list()

    # The card's tokens and cost come from the records, so the killed-and-resumed run reports
    # what the uninterrupted one does (it used to count only the last resumed run).
    def cost_table(run: str) -> list[str]:
        card = (tmp_path / run / "datasets" / "ToM-Synth-27K" / "README.md").read_text()
        return [line for line in card.split("## Tokens and cost")[1].splitlines()
                if line.startswith(("| generator", "| verifier"))]

    whole_rows, killed_rows = cost_table("whole"), cost_table("killed")
    assert len(whole_rows) == 2 and whole_rows == killed_rows, (whole_rows, killed_rows)
    generator = whole_rows[0].split("|")
    assert int(generator[2]) == total and int(generator[5]) > 0 and float(generator[7]) > 0
