"""The embedded default end to end (smoke sizes), and its resumability: the data stage and the
training stage are killed at random points, and the resumed run reaches the same outputs."""
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "launch"))
import demo as demo_mod  # noqa: E402
import demo_report  # noqa: E402

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
       "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


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


@pytest.mark.slow
def test_smoke_demo_runs_every_stage_and_writes_the_report(uninterrupted):
    out = uninterrupted
    assert {p.stem for p in (out / "stages").glob("*.json")} == {
        "data", "compare", "export", "model", "sft", "grpo", "eval", "report"}
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert set(summary["accuracy"]) == {"base", "sft", "grpo"}
    assert summary["n_test"] > 0 and "grpo_minus_sft" in summary
    assert summary["smoke"] is True
    assert summary["groups"]["grpo"]["all"]["n"] == summary["n_test"]
    md = (out / "report" / "report.md").read_text()
    assert "95% interval" in md and "GRPO" in md
    assert "**Smoke run**" in md and "NOT a significant" not in md
    html = (out / "report" / "report.html").read_text()
    # Every chart the report names is embedded (all-zero breakdowns have none: a sentence).
    assert html.count("data:image/png;base64,") == md.count("![") >= 3
    # Re-running skips every finished stage.
    log = finish(demo(out))
    assert log.count("done earlier, skipped") == 8


@pytest.mark.slow
def test_killed_data_and_training_stages_resume_to_the_same_outputs(uninterrupted, tmp_path):
    rng = random.Random(int(os.environ.get("DEMO_KILL_SEED", "0")))
    out = tmp_path / "demo"
    shards = demo_mod.Demo(out, [], profile=demo_mod.SMOKE).stories
    assert len(shards) == 2  # the search runs in two processes at once

    def written() -> list[str]:
        return [x for path in shards if path.exists() for x in path.read_text().splitlines()]

    # Kill the data stage once a random number of stories is written (often mid-line).
    wanted = rng.randint(1, 4)
    kill_when(demo(out, "--stages", "data"), lambda: len(written()) >= wanted)
    assert not (out / "stages" / "data.json").exists()
    finish(demo(out, "--stages", "data", "compare", "export", "model"))
    for path in shards:
        assert lines(path) == lines(uninterrupted / "data" / path.name)
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


# ------------------------------------------------------------------ fast: commands and the report
def test_printed_commands_are_shell_quoted(tmp_path, capsys):
    """Every command the demo prints can be pasted into a shell as it is (issue 17, item 6)."""
    args = [sys.executable, "-c", "import sys; sys.exit(0)", str(tmp_path / "a folder"),
            json.dumps([{"path": "runs/demo/data", "split": "train"}])]
    demo_mod.Demo(tmp_path, [], quiet=True).sh(*args)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("[demo] $ "))
    assert shlex.split(line[len("[demo] $ "):]) == args


def test_commands_train_on_the_profiles_threads_unless_the_caller_set_them(tmp_path, capfd,
                                                                           monkeypatch):
    """The README's figures were trained on two threads; the count changes the sums' order and
    so the model, so the demo pins it, and a caller's OMP_NUM_THREADS still wins."""
    show = (sys.executable, "-c", "import os; print('threads', os.environ['OMP_NUM_THREADS'])")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    demo_mod.Demo(tmp_path, []).sh(*show)
    assert "threads 2" in capfd.readouterr().out
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    demo_mod.Demo(tmp_path, []).sh(*show)
    assert "threads 1" in capfd.readouterr().out


def test_commands_run_without_the_libraries_noise_unless_the_caller_asks_for_it(tmp_path, capfd,
                                                                               monkeypatch):
    """vLLM's start-up lines, DeepSpeed's accelerator notice, dependency FutureWarnings and the
    datasets and transformers bars are off in the demo's commands; a variable the caller set is
    theirs."""
    names = ("VLLM_LOGGING_LEVEL", "DS_ACCELERATOR", "PYTHONWARNINGS", "HF_DATASETS_DISABLE_PROGRESS_BARS",
             "HF_HUB_DISABLE_PROGRESS_BARS")
    show = (sys.executable, "-c", f"import os; print([os.environ[n] for n in {names!r}])")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    demo_mod.Demo(tmp_path, []).sh(*show)
    assert "['ERROR', 'cpu', 'ignore::FutureWarning', '1', '1']" in capfd.readouterr().out
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "INFO")
    demo_mod.Demo(tmp_path, []).sh(*show)
    assert "['INFO', 'cpu'," in capfd.readouterr().out


def test_stages_are_numbered_among_the_profiles_own(tmp_path):
    """quick has no comparison and no GRPO: its stages count 1 to 6, not 1 to 8 with gaps."""
    assert demo_mod.Demo(tmp_path, [], profile=demo_mod.QUICK).stages == [
        "data", "export", "model", "sft", "eval", "report"]
    assert demo_mod.Demo(tmp_path, [], profile=demo_mod.REAL).stages == [
        "data", "export", "model", "sft", "grpo", "eval", "report"]
    assert demo_mod.Demo(tmp_path, [], profile=demo_mod.SMOKE).stages == list(demo_mod.STAGES)


@pytest.mark.parametrize("kind, sft", [("amx", "at most 26 min on a CPU with AMX-BF16"),
                                       ("amd-avx512_bf16", "about 18 min on an AMD CPU with avx512_bf16"),
                                       ("avx2", "about 36 min on a CPU with AVX2 only"),
                                       ("avx512_bf16", "about 36 min on a CPU with AVX2 only")])
def test_expected_durations_are_those_measured_on_this_cpus_kind(tmp_path, monkeypatch, kind, sft):
    """A kind never measured (Intel's avx512_bf16 without AMX) is told the slowest kind's."""
    monkeypatch.setattr(demo_mod, "cpu_kind", lambda: kind)
    quick = demo_mod.Demo(tmp_path, [], profile=demo_mod.QUICK)
    expected = quick.expected_durations()
    assert expected["sft"] == sft and set(expected) == set(quick.stages)


def test_commands_run_together_fail_the_stage_when_one_fails_and_stop_the_others(tmp_path):
    """The data stage runs its search shards at once: one failing shard fails the stage (naming
    its command) and the shards still running are stopped, not left writing."""
    slow = (sys.executable, "-c", "import time; time.sleep(60)")
    bad = (sys.executable, "-c", "import sys; sys.exit(3)")
    start = time.monotonic()
    with pytest.raises(demo_mod.DemoError, match="exit code 3: .*sys.exit"):
        demo_mod.Demo(tmp_path, [], quiet=True).sh_together([slow, bad])
    assert time.monotonic() - start < 30


def _record(i: int, correct: bool, *, prop: str = "container_location", order: int = 1,
            false_belief: bool = True) -> dict:
    """One `eval run` sample line: a story naming two of its setting's three containers."""
    story = "Anne moved the ball to the red box. Omar moved the ball to the basket."
    return {"id": f"q{i}", "sample": 0, "correct": correct, "format_ok": True,
            "answer_type": "short", "choices": [],
            "prompt": [{"role": "user", "content": f"Story:\n{story}\n\nQuestion: where?"}],
            "meta": {"property": prop, "order": order, "false_belief": false_belief,
                     "interesting": false_belief, "kind": "belief",
                     "story": {"context": {"containers": ["red box", "basket", "tin"],
                                           "rooms": ["kitchen"]}}}}


def _fake_run(out: Path, profile: str, correct: dict[str, list[bool]]) -> None:
    (out / "stages").mkdir(parents=True)
    (out / "demo.json").write_text(json.dumps({"profile": profile}))
    (out / "stages" / "sft.json").write_text(json.dumps({"seconds": 3.0}))
    for ckpt, hits in correct.items():
        folder = out / "eval" / ckpt / "samples"
        folder.mkdir(parents=True)
        with open(folder / "exploretom.jsonl", "w") as f:
            for i, hit in enumerate(hits):
                # the last quarter: room questions of order 0, not false-belief
                rec = (_record(i, hit) if i < 3 * len(hits) // 4 else
                       _record(i, hit, prop="room_location", order=0, false_belief=False))
                f.write(json.dumps(rec) + "\n")


def test_report_groups_intervals_and_chance_in_summary_json(tmp_path):
    out = tmp_path / "run"
    _fake_run(out, "default", {"base": [False] * 8, "sft": [False] * 80,
                               "grpo": [True] * 48 + [False] * 12 + [True] * 20})
    s = demo_report.build(out)
    saved = json.loads((out / "report" / "summary.json").read_text())
    assert saved["groups"] == s["groups"]
    grpo = saved["groups"]["grpo"]
    lo, hi = demo_report.wilson(48, 60)
    assert grpo["container_belief"] == {"n": 60, "accuracy": 0.8, "ci_low": lo, "ci_high": hi}
    assert grpo["false_belief"]["n"] == 60 and grpo["all"]["n"] == 80
    assert grpo["property=room_location,order=0"]["accuracy"] == 1.0
    assert set(grpo) >= {"all", "order=0", "order=1", "property=container_location",
                         "property=room_location", "false_belief", "interesting"}
    assert saved["groups"]["base"]["all"]["n"] == 8  # the base model's own sample
    # Chance: one of the two containers the story names (not of the setting's three); the one
    # room of a one-room story is always right.
    assert saved["chance"]["container_belief"] == 0.5
    assert saved["chance"]["property=room_location"] == 1.0
    assert saved["paired"]["container_belief"]["diff"] == 0.8
    md = (out / "report" / "report.md").read_text()
    assert "**GRPO improves on SFT by +85.0 points" in md
    assert "above chance by more than the interval" in md and "NOT above" not in md
    assert "Smoke run" not in md


def test_smoke_report_draws_no_conclusion_and_skips_empty_charts(tmp_path):
    out = tmp_path / "run"
    _fake_run(out, "smoke", {c: [False] * 8 for c in ("base", "sft", "grpo")})
    demo_report.build(out)
    md = (out / "report" / "report.md").read_text()
    assert "**Smoke run**" in md and "no conclusion is drawn" in md
    assert "NOT a significant" not in md and "**GRPO" not in md
    # Every breakdown is all zeros: no empty chart, a sentence instead.
    assert not list((out / "report").glob("accuracy_by_order.png"))
    assert md.count("(No chart: every checkpoint scores 0% in every group.)") == 5
    # Images stand on their own lines (a sentence is never cut by one).
    for line in md.splitlines():
        if "![" in line:
            assert line.startswith("![") and line.endswith(")"), line
    html = (out / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 1  # accuracy per checkpoint (no GRPO log)


def test_report_counts_a_right_answer_as_derived_only_with_a_checked_trace(tmp_path):
    """Table 11 of the ExploreToM paper: David saw Sarah's move, then left, so he thinks the
    model is in the metal filing cabinet. SFT answers with the tracker's trace, GRPO with the
    same answer after a trace in which David saw Mark's move too: both right, one derived. The
    records are scored as `eval run` scores them, the `derived` verdict included."""
    from eval.benchmarks.base import record_for
    from eval.benchmarks.exploretom import BENCHMARK
    from eval.rows import make_row
    from tests.exploretom.test_derived import QUESTION, david, reply

    meta, trace = david()
    row = make_row(id="q0", source="exploretom", user=QUESTION, answer=meta["answer"],
                   answer_type="short", meta={**meta, "story": {**meta["story"], "context": {}}})
    out = tmp_path / "run"
    _fake_run(out, "default", {"sft": [True], "grpo": [True]})
    for ckpt, think in (("sft", trace), ("grpo", trace.replace("David was elsewhere.",
                                                                "David saw it."))):
        rec = {"sample": 0, "prompt": row["prompt"], "choices": row["choices"],
               **record_for(row, reply(think), BENCHMARK)}
        (out / "eval" / ckpt / "samples" / "exploretom.jsonl").write_text(json.dumps(rec) + "\n")
    s = demo_report.build(out)
    assert s["groups"]["sft"]["all"]["accuracy"] == s["groups"]["grpo"]["all"]["accuracy"] == 1.0
    assert s["derived"]["sft"]["container_belief"]["derived"] == 1.0
    assert s["derived"]["grpo"]["container_belief"]["derived"] == 0.0
    md = (out / "report" / "report.md").read_text()
    assert "### Right with a checked derivation" in md
    assert "| container beliefs (orders 1-2) | 1 | 100.0% (20.7-100.0) | 0.0% (0.0-79.3) |" in md
    assert "right with a checked derivation: 0.0%." in md  # the false-belief line, of GRPO


def test_a_run_killed_after_its_last_step_is_finished_from_that_checkpoint(tmp_path):
    """A stage killed after saving its last step but before saving the model is complete, not
    resumed; its trainer_state.json says which step is the last (train.stop_at_step lowers it:
    tests/rl/test_training.py)."""
    out = tmp_path / "sft"
    ckpt = out / "checkpoint-20"
    ckpt.mkdir(parents=True)
    (ckpt / "model.safetensors").write_bytes(b"weights at step 20")
    (ckpt / "optimizer.pt").write_bytes(b"")
    run = demo_mod.Demo(tmp_path, [], quiet=True)
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": 20, "max_steps": 40}))
    assert not run._finish_from_checkpoint(ckpt, out)  # step 20 of 40: resume it
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": 20, "max_steps": 20}))
    assert run._finish_from_checkpoint(ckpt, out)
    assert (out / "model.safetensors").read_bytes() == b"weights at step 20"
    assert not (out / "optimizer.pt").exists()


def test_report_says_when_its_samples_predate_the_derived_verdicts(tmp_path):
    """Samples written before `eval run` checked derivations carry no `derived` verdict: the
    report says how to re-score them instead of silently leaving the table out."""
    out = tmp_path / "run"
    _fake_run(out, "default", {"sft": [True, False], "grpo": [True, True]})
    s = demo_report.build(out)
    assert s["derived_missing"] and not s["derived"]
    md = (out / "report" / "report.md").read_text()
    assert "No share right with a checked derivation: these samples were written before" in md


def test_a_checkpoint_torn_by_a_kill_is_removed_and_training_starts_over(tmp_path, capsys):
    """Killed while writing its first checkpoint (no trainer_state.json, written last), a stage has
    nothing to resume: the torn folder goes and the command runs without --resume; with a whole
    checkpoint beside a torn later one, it resumes (the trainer rewrites the later one)."""
    run = demo_mod.Demo(tmp_path, [], quiet=True)
    commands = []
    run.sh = lambda *args: commands.append([str(a) for a in args])
    out = tmp_path / "sft"
    (out / "checkpoint-1").mkdir(parents=True)
    (out / "checkpoint-1" / "model.safetensors").write_bytes(b"half")
    run._train("rl.sft", "cfg.yaml", tmp_path / "model", out, ())
    assert not (out / "checkpoint-1").exists() and "--resume" not in commands[-1]
    assert "checkpoint-1 was not written whole" in capsys.readouterr().out
    for step, whole in ((1, True), (2, False)):
        (out / f"checkpoint-{step}").mkdir()
        if whole:
            (out / f"checkpoint-{step}" / "trainer_state.json").write_text(
                json.dumps({"global_step": 1, "max_steps": 4}))
    run._train("rl.sft", "cfg.yaml", tmp_path / "model", out, ())
    assert commands[-1][-1] == "--resume" and (out / "checkpoint-2").exists()
