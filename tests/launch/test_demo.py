"""The embedded default end to end (smoke sizes), and its resumability: the data stage and the
training stage are killed at random points, and the resumed run reaches the same outputs."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
       "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
pytestmark = pytest.mark.slow


def demo(out: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "launch" / "demo.py"), "--out", str(out),
                             "--profile", "smoke", "-q", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, **kw)


def finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def kill_when(proc: subprocess.Popen, ready, timeout: float = 300) -> None:
    """SIGKILL the whole process group once `ready()` holds (or the run ends)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and not ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def lines(path: Path) -> list[str]:
    return sorted(line for line in path.read_text().splitlines() if line.strip())


def weights(folder: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo-full")
    log = finish(demo(out))
    assert "finished" in log
    return out


def test_smoke_demo_runs_every_stage_and_writes_the_report(uninterrupted):
    out = uninterrupted
    assert {p.stem for p in (out / "stages").glob("*.json")} == {
        "data", "compare", "export", "model", "sft", "grpo", "eval", "report"}
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert set(summary["accuracy"]) == {"base", "sft", "grpo"}
    assert summary["n_test"] > 0 and "grpo_minus_sft" in summary
    md = (out / "report" / "report.md").read_text()
    assert "95% interval" in md and "GRPO" in md
    html = (out / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 5
    # Re-running skips every finished stage.
    log = finish(demo(out))
    assert log.count("done earlier, skipped") == 8


def test_killed_data_and_training_stages_resume_to_the_same_outputs(uninterrupted, tmp_path):
    rng = random.Random(int(os.environ.get("DEMO_KILL_SEED", "0")))
    out = tmp_path / "demo"
    stories = out / "data" / "stories.jsonl"
    # Kill the data stage once a random number of stories is written (often mid-line).
    wanted = rng.randint(1, 4)
    kill_when(demo(out, "--stages", "data"),
              lambda: stories.exists() and len(stories.read_text().splitlines()) >= wanted)
    assert not (out / "stages" / "data.json").exists()
    finish(demo(out, "--stages", "data", "compare", "export", "model"))
    assert lines(stories) == lines(uninterrupted / "data" / "stories.jsonl")
    # Kill SFT at a random moment after its first checkpoint, then let the demo resume it.
    sft = out / "sft"
    delay = rng.uniform(0.0, 1.5)
    kill_when(demo(out, "--stages", "sft"),
              lambda: (sft / "checkpoint-2").exists() and time.sleep(delay) is None)
    finish(demo(out, "--stages", "sft", "grpo"))
    for name in ("sft", "grpo"):
        a, b = weights(out / name), weights(uninterrupted / name)
        assert a.keys() == b.keys()
        assert all((a[k] == b[k]).all() for k in a), f"{name}: weights differ after resume"
