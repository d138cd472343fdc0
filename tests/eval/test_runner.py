"""The runner end to end with scripted backends over a tiny benchmark defined here: scores,
results.json, per-sample files, resume after an interruption, cache invalidation, sampling."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.answers import tagged
from eval.backends.base import Completion, GenerationConfig, ScriptedBackend
from eval.benchmarks.base import Benchmark
from eval.rows import SYSTEM_PROMPT, make_row, user_text
from eval.runner import OutputInUse, Task, run_tasks
from eval.results import load_results

# Ten questions of every answer type, with an order breakdown as Hi-ToM/ExploreToM have.
ITEMS = [
    ("Where will Sally look for the ball?", "basket", "short", [], 1),
    ("Where is the ball really?", "box", "short", [], 0),
    ("Which container? (A) box (B) basket", "B", "choice", ["box", "basket"], 1),
    ("Which container first? (A) box (B) basket", "A", "choice", ["box", "basket"], 0),
    ("Does Anne know where the ball is?", "yes", "yes_no", [], 1),
    ("Does Sally know where the ball is?", "no", "yes_no", [], 2),
    ("Does Sally know about the move?", "does not know about it", "knowledge", [], 2),
    ("Does Anne know about the move?", "knows about it", "knowledge", [], 1),
    ("How many balls are there? ", "2", "number", [], 0),
    ("Where does Anne think Sally looks?", "basket", "short", [], 2),
]


def write_tiny(path: Path, items=ITEMS) -> Path:
    with path.open("w") as f:
        for i, (question, answer, kind, choices, order) in enumerate(items):
            f.write(json.dumps({"qid": f"q{i}", "question": question, "answer": answer,
                                "kind": kind, "choices": choices, "order": order}) + "\n")
    return path


def load_tiny(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rows.append(make_row(id=rec["qid"], source="tiny", user=rec["question"], answer=rec["answer"],
                             answer_type=rec["kind"], choices=rec["choices"],
                             meta={"order": rec["order"]}))
    return rows


TINY = Benchmark(name="tiny", category="tom", load=load_tiny, breakdowns=("order",))


def tiny_task(tmp_path: Path, config=GenerationConfig(max_new_tokens=32), items=ITEMS) -> Task:
    data = write_tiny(tmp_path / "tiny.jsonl", items)
    return Task(TINY, TINY.load_rows(data), config, str(data))


def answer_key(task: Task) -> dict[str, str]:
    return {user_text(r): r["answer"] for r in task.rows}


def perfect(task: Task) -> ScriptedBackend:
    key = answer_key(task)
    return ScriptedBackend(lambda conv: tagged(key[conv[-1]['content']], "x"),
                           model="perfect")


class Interrupted(Exception):
    pass


class CountingBackend(ScriptedBackend):
    """Counts the prompts it is asked, and can stop the run after `fail_after` answers."""

    def __init__(self, fn, model="perfect", fail_after=None):
        super().__init__(fn, model)
        self.asked, self.fail_after = 0, fail_after

    def generate(self, prompts, config=GenerationConfig(), *, on_result=None, progress=False):
        self.asked += len(prompts)
        done = 0

        def wrapped(i, completion):
            nonlocal done
            if self.fail_after is not None and done >= self.fail_after:
                raise Interrupted("killed midway")
            on_result(i, completion)
            done += 1

        return super().generate(prompts, config, on_result=wrapped if on_result else None)


def quiet(_msg):
    pass


def samples(out: Path) -> list[dict]:
    return [json.loads(l) for l in (out / "samples" / "tiny.jsonl").read_text().splitlines()]


def test_perfect_backend_end_to_end(tmp_path):
    task = tiny_task(tmp_path)
    out = tmp_path / "run"
    results = run_tasks([task], perfect(task), out, suite_name="unit", log=quiet, progress=False)
    entry = results["benchmarks"]["tiny"]
    assert entry["score"] == 1.0 and entry["n"] == 10 and entry["n_failed"] == 0
    assert entry["metrics"]["by_order"] == {
        "0": {"accuracy": 1.0, "n": 3}, "1": {"accuracy": 1.0, "n": 4}, "2": {"accuracy": 1.0, "n": 3}}
    assert entry["format_ok_rate"] == 1.0
    on_disk = load_results(out / "results.json")
    for key in ("model", "backend", "generation", "prompt_template_hash", "git_commit",
                "started_at", "finished_at", "duration_s"):
        assert key in on_disk
    assert on_disk["schema_version"] == 1 and on_disk["model"] == "perfect"
    assert on_disk["backend"]["backend"] == "scripted"
    assert entry["generation"]["max_new_tokens"] == 32 and entry["generation"]["temperature"] == 0.0
    lines = samples(out)
    assert [l["id"] for l in lines] == [f"q{i}" for i in range(10)]
    first = lines[0]
    assert first["prompt"] == task.rows[0]["prompt"] and first["gold"] == "basket"
    assert first["extracted"] == "basket" and first["correct"] is True
    assert first["meta"] == {"order": 1} and first["response"].startswith("<think>")
    md = (out / "report.md").read_text()
    assert "| Model | tiny | Avg |" in md and "| perfect | 100.00% | 100.00% |" in md
    html = (out / "report.html").read_text()
    assert "<table>" in html and "data:image/png;base64," in html
    assert (out / "report_scores.png").stat().st_size > 1000


def test_constant_backend_scores_chance(tmp_path):
    items = [(f"Question {i}? (A) box (B) basket", "AB"[i % 2], "choice", ["box", "basket"], 0)
             for i in range(8)]
    task = tiny_task(tmp_path, items=items)
    backend = ScriptedBackend(lambda conv: tagged("A", "guess"), model="always-A")
    results = run_tasks([task], backend, tmp_path / "run", log=quiet, progress=False, report=False)
    assert results["benchmarks"]["tiny"]["score"] == pytest.approx(0.5)


def test_interrupted_run_resumes_without_duplicates(tmp_path):
    task = tiny_task(tmp_path)
    key = answer_key(task)
    fn = lambda conv: tagged(key[conv[-1]['content']], "x")  # noqa: E731
    out = tmp_path / "run"
    with pytest.raises(Interrupted):
        run_tasks([task], CountingBackend(fn, fail_after=4), out, log=quiet, progress=False)
    assert len(samples(out)) == 4  # written as they came, before the crash
    again = CountingBackend(fn)
    resumed = run_tasks([task], again, out, log=quiet, progress=False)
    assert again.asked == 6  # only what was missing
    ids = [l["id"] for l in samples(out)]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 10
    clean = run_tasks([task], CountingBackend(fn), tmp_path / "clean", log=quiet, progress=False)
    assert resumed["benchmarks"]["tiny"]["metrics"] == clean["benchmarks"]["tiny"]["metrics"]
    assert resumed["benchmarks"]["tiny"]["n_cached"] == 4
    third = CountingBackend(fn)
    run_tasks([task], third, out, log=quiet, progress=False)
    assert third.asked == 0


def test_cache_is_reused_only_for_same_settings_and_prompt(tmp_path):
    task = tiny_task(tmp_path)
    key = answer_key(task)
    fn = lambda conv: tagged(key.get(conv[-1]['content'], 'box'), "x")  # noqa: E731
    out = tmp_path / "run"
    run_tasks([task], CountingBackend(fn), out, log=quiet, progress=False, report=False)
    other_settings = Task(task.benchmark, task.rows, GenerationConfig(max_new_tokens=64), task.data)
    b = CountingBackend(fn)
    run_tasks([other_settings], b, out, log=quiet, progress=False, report=False)
    assert b.asked == 10 and len(samples(out)) == 10  # file started afresh
    b = CountingBackend(fn, model="another-model")
    with pytest.raises(OutputInUse, match="model .perfect. there, .another-model. here"):
        run_tasks([other_settings], b, out, log=quiet, progress=False, report=False)
    assert b.asked == 0  # another model's run is never written over without --fresh
    run_tasks([other_settings], b, out, log=quiet, progress=False, report=False, fresh=True)
    assert b.asked == 10
    changed = [dict(r) for r in other_settings.rows]
    changed[3]["prompt"] = [{"role": "user", "content": "A reworded question?"}]
    b = CountingBackend(fn, model="another-model")
    run_tasks([Task(task.benchmark, changed, other_settings.config)], b, out, log=quiet,
              progress=False, report=False)
    assert b.asked == 1
    b = CountingBackend(fn, model="another-model")
    run_tasks([Task(task.benchmark, changed, other_settings.config)], b, out, log=quiet,
              progress=False, report=False, fresh=True)
    assert b.asked == 10


def test_cut_off_last_line_is_redone(tmp_path):
    task = tiny_task(tmp_path)
    out = tmp_path / "run"
    run_tasks([task], perfect(task), out, log=quiet, progress=False, report=False)
    path = out / "samples" / "tiny.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # a kill in the middle of writing the last line
    messages = []
    b = CountingBackend(perfect(task).fn)
    results = run_tasks([task], b, out, log=messages.append, progress=False, report=False)
    assert b.asked == 1 and results["benchmarks"]["tiny"]["score"] == 1.0
    assert any("line 10: unreadable" in m for m in messages)


def test_a_line_cut_within_a_character_is_redone_and_a_foreign_line_refused(tmp_path):
    """The sample file is read by the project's one JSONL reader (eval.jsonl): a last line cut
    within a multi-byte character is a cut line like any other; a line of JSON that is not an
    object was not written by a run, and the run stops with one line naming it rather than
    rewrite the file without it."""
    from eval.jsonl import InputError

    task = tiny_task(tmp_path)
    out = tmp_path / "run"
    run_tasks([task], perfect(task), out, log=quiet, progress=False, report=False)
    path = out / "samples" / "tiny.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + '{"id": "é'.encode()[:-1])
    messages = []
    b = CountingBackend(perfect(task).fn)
    results = run_tasks([task], b, out, log=messages.append, progress=False, report=False)
    assert b.asked == 1 and results["benchmarks"]["tiny"]["score"] == 1.0
    assert any("line 10: unreadable" in m for m in messages)
    with path.open("ab") as f:
        f.write(b"[1, 2]\n")
    with pytest.raises(InputError) as e:
        run_tasks([task], perfect(task), out, log=quiet, progress=False, report=False)
    assert str(e.value) == f"{path}: line 11: expected a JSON object, got list"


def test_failed_prompts_are_not_cached_and_are_retried(tmp_path):
    task = tiny_task(tmp_path)
    good = perfect(task)

    class Flaky(ScriptedBackend):
        def generate(self, prompts, config=GenerationConfig(), *, on_result=None, progress=False):
            out = []
            for i, conv in enumerate(prompts):
                c = (Completion(error="HTTP 503 after 5 retries") if "Sally" in conv[-1]["content"]
                     else Completion(texts=[good.fn(conv)]))
                on_result(i, c)
                out.append(c)
            return out

    results = run_tasks([task], Flaky(good.fn, "perfect"), tmp_path / "run", log=quiet, progress=False,
                        report=False)
    entry = results["benchmarks"]["tiny"]
    assert entry["n_failed"] == 4 and entry["n"] == 6 and entry["score"] == 1.0
    b = CountingBackend(good.fn)
    results = run_tasks([task], b, tmp_path / "run", log=quiet, progress=False, report=False)
    assert b.asked == 4 and results["benchmarks"]["tiny"]["n"] == 10


def test_several_samples_per_prompt_average_over_samples(tmp_path):
    config = GenerationConfig(max_new_tokens=32, temperature=1.0, n=2)
    task = tiny_task(tmp_path, config)
    key = answer_key(task)
    calls = {"k": 0}

    def alternate(conv):
        calls["k"] += 1
        gold = key[conv[-1]["content"]]
        return tagged(gold if calls['k'] % 2 else 'the moon', "x")

    results = run_tasks([task], ScriptedBackend(alternate, "sampler"), tmp_path / "run", log=quiet,
                        progress=False, report=False)
    entry = results["benchmarks"]["tiny"]
    assert entry["samples_per_prompt"] == 2 and entry["n"] == 10
    assert entry["score"] == pytest.approx(0.5)
    assert entry["metrics"]["by_order"]["1"]["accuracy"] == pytest.approx(0.5)
    lines = samples(tmp_path / "run")
    assert len(lines) == 20 and {l["sample"] for l in lines} == {0, 1}


def test_two_checkpoints_with_the_same_name_do_not_overwrite_each_other(tmp_path, capsys):
    # issue 16 item 10: runs/sft/final and runs/grpo/final both default to runs/eval/final/<suite>
    from eval.cli import main

    task = tiny_task(tmp_path)
    out = tmp_path / "runs" / "eval" / "final" / "unit"
    run_tasks([task], ScriptedBackend(lambda c: "A", model="runs/sft/final"), out, log=quiet,
              progress=False, report=False)
    before = (out / "results.json").read_text()
    with pytest.raises(OutputInUse, match="model 'runs/sft/final' there, 'runs/grpo/final' here"):
        run_tasks([task], ScriptedBackend(lambda c: "B", model="runs/grpo/final"), out,
                  log=quiet, progress=False, report=False)
    assert (out / "results.json").read_text() == before
    # the command line refuses before loading the model (which does not even exist here)
    code = main(["run", "tomi", "--model", "runs/grpo/final", "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "\n" not in err and "--fresh" in err
    # the same model resumes as before
    b = CountingBackend(lambda c: "A", model="runs/sft/final")
    run_tasks([task], b, out, log=quiet, progress=False, report=False)
    assert b.asked == 0


# ------------------------------------------------------------------- which rows a run asks
# issue 16 item 9: --limit N is the first N items; --sample N draws N items at random with the
# run's seed, as the papers' subsets (configs/eval/tom-synth-paper.yaml) are drawn.

def test_sample_from_the_command_line_is_recorded(tmp_path, capsys, monkeypatch):
    from eval import backends
    from eval.cli import main

    monkeypatch.setattr(backends, "load_backend",
                        lambda kind, model, **o: ScriptedBackend(lambda c: "A", model=model))
    out = tmp_path / "out"
    args = ["run", "tombench", "--model", "m", "-o", str(out), "--no-progress", "--no-report",
            "--sample", "7", "--seed", "3", "--bench-option", "tombench.permutations=2"]
    assert main(args) == 0
    entry = load_results(out)["benchmarks"]["tombench"]
    assert entry["n"] == 14 and entry["metrics"]["n"] == 7
    assert entry["selection"] == {"items_available": 100, "sample": 7, "seed": 3, "items": 7,
                                  "options": {"permutations": 2}, "system_prompt": SYSTEM_PROMPT}
    for bad, message in ((["--bench-option", "permutations=2"], "NAME.KEY=VALUE"),
                         (["--bench-option", "tomi.permutations=2"], "not in suite"),
                         (["--bench-option", "tombench.shuffle=2"], "tombench has no option 'shuffle'"),
                         (["--sample", "0"], "--sample must be >= 1")):
        capsys.readouterr()
        assert main(["run", "tombench", "--model", "m", "-o", str(tmp_path / "x"), *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


# ------------------------------------------------- issue 30: system prompt, orders, chance, reading

def test_the_system_prompt_is_a_setting_recorded_with_the_results(tmp_path):
    from eval.rows import resolve_system_prompt
    from eval.runner import load_tasks
    from eval.suites import load_config, Suite

    assert resolve_system_prompt(None, "own") == "own" == resolve_system_prompt("default", "own")
    assert resolve_system_prompt("tags", "own") == SYSTEM_PROMPT
    assert resolve_system_prompt("none", "own") is None
    assert resolve_system_prompt("Be brief.", "own") == "Be brief."
    suite = load_config(None, Suite, {"name": "s", "system_prompt": "none",
                                      "benchmarks": ["tomi", {"name": "aime2025", "system_prompt": "default"}]})
    tasks = {t.benchmark.name: t for t in load_tasks(suite, limit=2, log=lambda m: None)}
    assert all(r["prompt"][0]["role"] == "user" for r in tasks["tomi"].rows)
    assert tasks["tomi"].selection["system_prompt"] is None
    aime = tasks["aime2025"]
    assert aime.rows[0]["prompt"][0] == {"role": "system", "content": aime.benchmark.system_prompt}
    assert "boxed" in aime.benchmark.system_prompt  # the IQ benchmarks' own convention
    cli = load_tasks(suite, limit=2, system_prompt="tags", log=lambda m: None)
    assert all(t.rows[0]["prompt"][0]["content"] == SYSTEM_PROMPT for t in cli)


def test_a_position_habit_scores_chance_over_option_orders_and_shows_in_the_results(tmp_path):
    rows = [make_row(id=f"q{i}", source="t", user=f"Story {i}.\nQuestion: Where?\nA. box\nB. basket",
                     answer="AB"[i % 2], answer_type="choice", choices=["box", "basket"])
            for i in range(6)]
    bench = Benchmark(name="mc", category="tom", load=lambda p: rows)
    from eval.option_orders import with_option_orders

    always_b = ScriptedBackend(lambda c: "B. basket" if "B. basket" in c[-1]["content"] else "B. box",
                               model="habit")
    for k, accuracy in ((1, 0.5), (2, 0.5)):
        task = Task(bench, with_option_orders(rows, k)[0], GenerationConfig())
        res = run_tasks([task], always_b, tmp_path / f"k{k}", log=quiet, progress=False, report=False)
        entry = res["benchmarks"]["mc"]
        assert entry["score"] == accuracy and entry["chance"] == 0.5
        assert entry["top_position"] == "B" and entry["top_position_share"] == 1.0
        assert entry["read"] == {"tag": 0, "fallback": 6 * k, "unparsed": 0}


def test_unparsed_replies_are_counted_apart(tmp_path):
    task = tiny_task(tmp_path)
    b = ScriptedBackend(lambda c: "I would rather not say, it is hard to tell from the story. " * 5,
                        model="mute")
    entry = run_tasks([task], b, tmp_path / "o", log=quiet, progress=False,
                      report=False)["benchmarks"]["tiny"]
    assert entry["score"] == 0 and entry["extraction_failed"] == 10
    assert entry["read"] == {"tag": 0, "fallback": 0, "unparsed": 10}
    assert entry["chance"] is None  # two short rows have open answers
