"""The real-model recipe end to end at toy sizes (launch/demo.py --profile real-smoke): a GGUF
file is imported, trained with SFT then GRPO on our data, every checkpoint evaluated on the
transfer suite and the transfer report written. The real profile runs the same code with
SmolLM2-135M-Instruct."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rl"))
from tiny_gguf import write_tiny_gguf  # noqa: E402

pytest.importorskip("gguf")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
       "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


@pytest.mark.slow
def test_real_smoke_profile_runs_every_stage_and_writes_the_transfer_report(tmp_path):
    gguf = write_tiny_gguf(tmp_path / "tiny.Q4_1.gguf", hidden=64)
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(ROOT / "launch" / "demo.py"), "--profile",
                           "real-smoke", "--model-source", str(gguf), "--out", str(out), "-q"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for stage in ("data", "export", "model", "sft", "grpo", "eval", "report"):
        assert (out / "stages" / f"{stage}.json").exists(), stage
    assert json.loads((out / "model" / "import.json").read_text())["gguf_file"] == gguf.name
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["checkpoints"] == ["base", "sft", "grpo"]
    assert {"tomi", "hitom", "bigtom", "exploretom"} <= set(summary["benchmarks"])
    tomi = summary["benchmarks"]["tomi"]
    assert set(tomi["paired"]) == {"sft-base", "grpo-base", "grpo-sft"}
    assert tomi["checkpoints"]["base"]["n"] == 2 and tomi["checkpoints"]["base"]["chance"] > 0
    assert set(summary["goals"]) >= {"gains", "fell", "met"}
    md = (out / "report" / "report.md").read_text()
    assert "| ToMi | 2 |" in md and "How the replies were read" in md
    assert "<img" in (out / "report" / "report.html").read_text()
    # the held-out split is our own test split, the rest the shared samples
    entry = json.loads((out / "eval" / "sft" / "results.json").read_text())["benchmarks"]
    assert entry["exploretom"]["data"].endswith("exploretom")
    assert entry["bigtom"]["selection"]["permutations"] == 2


def test_real_smoke_needs_a_model_source(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "launch" / "demo.py"), "--profile",
                           "real-smoke", "--out", str(tmp_path / "x")], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "needs --model-source" in proc.stderr
