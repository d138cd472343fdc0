"""EmoBench loader: the shared sample loads, scores as the original does (EU counts when emotion
and cause are both right), and bad input fails with one line naming file, line and field."""
import json
import re
import shutil

import pytest

from eval.benchmarks.base import BenchmarkFormatError, scripted_metrics
from eval.benchmarks.emobench import BENCHMARK, load
from eval.rows import SYSTEM_PROMPT, meta, validate_row


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path()


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows(sample)


def _lines(path):
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(rows, answer_of):
    """Ask a scripted backend (the runner's path) and score every completion."""
    assert len({json.dumps(r["prompt"]) for r in rows}) == len(rows), "two rows share a prompt"
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_sample_line_loads(sample, rows):
    n_ea = len(_lines(sample / "data" / "EA.jsonl"))
    n_eu = len(_lines(sample / "data" / "EU.jsonl"))
    assert len(rows) == n_ea + 2 * n_eu  # an EU line is an emotion row and a cause row
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        validate_row(r)
        assert r["source"] == "emobench"
        assert r["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        m = meta(r)
        assert {"task", "language", "category", "qid"} <= set(m)
        assert (m["task"] == "EU") == ("part" in m)
    assert {meta(r)["language"] for r in rows} == {"en", "zh"}


def test_prompt_presents_options_and_gold_is_the_labelled_text(sample, rows):
    first = json.loads(_lines(sample / "data" / "EA.jsonl")[0])
    row = next(r for r in rows if r["id"] == f"emobench-EA-{first['language']}-{first['qid']}")
    user = row["prompt"][-1]["content"]
    for letter, text in zip("ABCD", first["choices"]):
        assert f"\n{letter}. {text.strip()}" in user
    assert row["choices"][ord(row["answer"]) - ord("A")] == first["label"]
    assert first["scenario"] in user and "letter" in user


def test_perfect_answerer_scores_100(rows):
    metrics = _run(rows, lambda r: f"<think>I read the key.</think><answer>{r['answer']}</answer>")
    assert metrics["accuracy"] == 1.0
    assert all(t["accuracy"] == 1.0 for t in metrics["by_task"].values())
    assert set(metrics["by_task"]) == {"EA", "EU-emotion", "EU-cause", "EU-both"}


def test_constant_answerer_scores_chance(rows):
    metrics = _run(rows, lambda r: "<think>always the first</think><answer>A</answer>")
    ea = [r for r in rows if meta(r)["task"] == "EA"]
    pairs = {}
    for r in rows:
        m = meta(r)
        if m["task"] == "EU":
            pairs.setdefault((m["qid"], m["language"]), []).append(r["answer"] == "A")
    ea_acc = sum(r["answer"] == "A" for r in ea) / len(ea)
    both_acc = sum(all(v) for v in pairs.values()) / len(pairs)
    emotion = [r for r in rows if meta(r).get("part") == "emotion"]
    assert metrics["by_task"]["EA"]["accuracy"] == pytest.approx(ea_acc)
    assert metrics["by_task"]["EU-both"]["accuracy"] == pytest.approx(both_acc)
    assert metrics["by_task"]["EU-both"]["n"] == len(pairs)
    assert metrics["by_task"]["EU-emotion"]["accuracy"] == pytest.approx(
        sum(r["answer"] == "A" for r in emotion) / len(emotion))
    assert metrics["accuracy"] == pytest.approx((ea_acc + both_acc) / 2)


def test_eu_both_needs_both_parts(rows):
    # right emotion, wrong cause: the item is wrong, as in the original's joint score
    def answer(r):
        m = meta(r)
        gold = r["answer"]
        wrong = "B" if gold == "A" else "A"
        return f"<think>x</think><answer>{wrong if m.get('part') == 'cause' else gold}</answer>"

    metrics = _run(rows, answer)
    assert metrics["by_task"]["EU-emotion"]["accuracy"] == 1.0
    assert metrics["by_task"]["EU-cause"]["accuracy"] == 0.0
    assert metrics["by_task"]["EU-both"]["accuracy"] == 0.0


def test_breakdowns_appear(rows):
    metrics = _run(rows, lambda r: f"<think>x</think><answer>{r['answer']}</answer>")
    assert set(metrics["by_language"]) == {"en", "zh"}
    assert {"by_language", "by_category", "by_question_type"} <= set(metrics["tasks"]["EA"])
    assert {"by_language", "by_category"} <= set(metrics["tasks"]["EU-both"])
    assert set(metrics["tasks"]["EA"]["by_question_type"]) == {"Action", "Response"}


def test_loads_a_single_task_file(sample):
    eu = load(sample / "data" / "EU.jsonl")
    assert {meta(r)["task"] for r in eu} == {"EU"}


@pytest.fixture
def copy(sample, tmp_path):
    dst = tmp_path / "emobench"
    shutil.copytree(sample, dst)
    return dst


def _rewrite_line(path, lineno, edit):
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[lineno - 1] = edit(lines[lineno - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_corrupt_line_names_file_and_line(copy):
    f = copy / "data" / "EA.jsonl"
    _rewrite_line(f, 4, lambda line: line[: len(line) // 2])
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 4: not valid JSON")):
        load(copy)


def test_missing_field_names_the_field(copy):
    f = copy / "data" / "EU.jsonl"

    def drop_cause(line):
        obj = json.loads(line)
        del obj["cause_label"]
        return json.dumps(obj, ensure_ascii=False)

    _rewrite_line(f, 7, drop_cause)
    with pytest.raises(BenchmarkFormatError) as e:
        load(copy)
    msg = str(e.value)
    assert msg.startswith(f"{f}: line 7:") and "'cause_label'" in msg and "\n" not in msg


def test_gold_not_among_options(copy):
    f = copy / "data" / "EA.jsonl"

    def relabel(line):
        obj = json.loads(line)
        obj["label"] = "none of these"
        return json.dumps(obj, ensure_ascii=False)

    _rewrite_line(f, 2, relabel)
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 2: field 'label'")):
        load(copy)


def test_folder_without_release_files(tmp_path):
    with pytest.raises(BenchmarkFormatError, match="no EA.jsonl or EU.jsonl"):
        load(tmp_path)
