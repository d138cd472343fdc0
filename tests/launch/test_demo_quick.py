"""`make demo`'s profile (launch/demo.py --profile quick) at toy sizes: a GGUF imported, SFT on our
data, base and SFT evaluated on ToMi, Hi-ToM and our held-out split, and the transfer report opening
with the goal table; killed in SFT and run again, it ends with the same weights and report."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rl"))
from tiny_gguf import write_tiny_gguf  # noqa: E402

pytest.importorskip("gguf")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
       "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def _demo(out: Path, gguf: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "launch" / "demo.py"), "--profile", "quick-smoke",
                             "--model-source", str(gguf), "--out", str(out), "-q", *args],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _finish(proc: subprocess.Popen) -> str:
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out[-4000:]
    return out


def _weights(folder: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def _figures(out: Path) -> dict:
    """summary.json without the model paths (the two runs live in two folders)."""
    summary = json.loads((out / "report" / "summary.json").read_text())
    for bench in summary["benchmarks"].values():
        bench.pop("shortcuts", None)
    return summary


@pytest.mark.slow
def test_quick_profile_trains_sft_alone_reports_goals_first_and_resumes_after_a_kill(tmp_path):
    gguf = write_tiny_gguf(tmp_path / "tiny.Q4_1.gguf", hidden=64)
    whole = tmp_path / "whole"
    log = _finish(_demo(whole, gguf))
    assert {p.stem for p in (whole / "stages").glob("*.json")} == {
        "data", "export", "model", "sft", "eval", "report"}  # no comparison, no GRPO in this profile
    assert "[demo] stage 3/6 model" in log and "[demo] stage 6/6 report" in log
    summary = json.loads((whole / "report" / "summary.json").read_text())
    assert summary["checkpoints"] == ["base", "sft"]
    assert set(summary["benchmarks"]) == {"tomi", "hitom", "exploretom"}
    assert {n: g["goal_points"] for n, g in summary["goals"]["gains"].items()} == {"tomi": 15, "hitom": 8}
    md = (whole / "report" / "report.md").read_text()
    first = md.split("\n## ")[0]  # before any section: the goal table and the plot
    assert "| goal: sft - base |" in first and "| ToMi |" in first and "![" in first
    assert "ToMi by question kind (base -> sft)" in first
    assert "| goal: sft - base |" in log  # printed where the run ends
    assert "<img" in (whole / "report" / "report.html").read_text()

    # killed after SFT's first checkpoint, then the same command again
    out = tmp_path / "killed"
    proc = _demo(out, gguf)
    deadline = time.monotonic() + 600
    while proc.poll() is None and not (out / "sft" / "checkpoint-1").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "stages" / "sft.json").exists()
    _finish(_demo(out, gguf))
    a, b = _weights(out / "sft"), _weights(whole / "sft")
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
    assert _figures(out)["benchmarks"] == _figures(whole)["benchmarks"]
    assert (out / "report" / "report.md").read_text().split("- base: `")[0] == first.split("- base: `")[0]
