"""ToMi loader: bAbI-style .txt + line-aligned .trace, exact-match locations, per-type accuracy."""

from eval.answers import tagged
from eval.benchmarks.base import record_for, scripted_metrics
from eval.benchmarks.tomi import BENCHMARK, question_kind
from eval.rows import SYSTEM_PROMPT, meta, user_text


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_example_loads(sample, rows):
    text = (sample / "fb_all_test.txt").read_text()
    questions = [line for line in text.splitlines() if "\t" in line]
    traces = (sample / "fb_all_test.trace").read_text().splitlines()
    assert len(rows) == len(questions) == len(traces) == 99
    for r, q, t in zip(rows, questions, traces):
        assert r["source"] == "tomi" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["answer_type"] == "short" and r["choices"] == []
        question, answer, _ = q.split(" ", 1)[1].split("\t")
        assert r["answer"] == answer and user_text(r).endswith(f"Question: {question}")
        m = meta(r)
        assert [m["question_type"], m["story_type"]] == t.split(",")[-2:]


def test_story_is_shown_without_line_numbers(rows):
    user = user_text(rows[0])
    assert "Aria entered the front_yard.\nAiden entered the front_yard." in user
    assert "1 Aria" not in user


def test_perfect_answerer_scores_100_with_spaces_and_article(rows):
    # the gold as written: tests/eval/test_benchmarks_all.py; the shared parser also reads
    # `green bucket` and `the green_bucket.` as `green_bucket`
    spaced = run(rows, lambda r: tagged(f"the {r['answer'].replace('_', ' ')}.", "t"))
    assert spaced["accuracy"] == 1.0


def test_breakdowns_by_question_and_story_type(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_question_kind"]) == {"first_order", "second_order", "reality", "memory"}
    assert len(metrics["by_question_type"]) == 9
    assert all(v["n"] == 11 for v in metrics["by_question_type"].values())
    assert set(metrics["by_story_type"]) == {"true_belief", "false_belief", "second_order_false_belief"}
    assert question_kind("second_order_1_no_tom") == "second_order"
    assert question_kind("reality") == "reality"


def test_corrupt_story_line_names_file_and_line(copy, one_line_error):
    txt = copy / "fb_all_test.txt"
    lines = txt.read_text().splitlines()
    lines[3] = "the grapefruit moved"  # no line number
    txt.write_text("\n".join(lines) + "\n")
    msg = one_line_error(copy)
    assert "fb_all_test.txt" in msg and "line 4" in msg


def test_broken_question_line_names_file_and_line(copy, one_line_error):
    txt = copy / "fb_all_test.txt"
    lines = txt.read_text().splitlines()
    lines[6] = lines[6].split("\t")[0] + "\tgreen_bucket"  # the supporting-line field is gone
    txt.write_text("\n".join(lines) + "\n")
    msg = one_line_error(copy / "fb_all_test.txt")
    assert "fb_all_test.txt" in msg and "line 7" in msg


def test_bad_trace_names_trace_file_and_line(copy, one_line_error):
    trace = copy / "fb_all_test.trace"
    lines = trace.read_text().splitlines()
    fields = lines[4].split(",")
    lines[4] = ",".join(fields[:-2] + ["third_order", fields[-1]])
    trace.write_text("\n".join(lines) + "\n")
    msg = one_line_error(copy)
    assert "fb_all_test.trace" in msg and "line 5" in msg and "question type" in msg


def test_missing_trace_and_missing_file(copy, tmp_path, one_line_error):
    (copy / "fb_all_test.trace").unlink()
    assert ".trace" in one_line_error(copy / "fb_all_test.txt")
    assert "nope.txt" in one_line_error(tmp_path / "nope.txt")


def test_trace_count_mismatch(copy, one_line_error):
    trace = copy / "fb_all_test.trace"
    trace.write_text("\n".join(trace.read_text().splitlines()[:-1]) + "\n")
    msg = one_line_error(copy)
    assert "98 trace lines for 99 examples" in msg


# ------------------------------------------- reading untagged replies
# facebookresearch/ToMi ships stories and an oracle, no reader of free text: its models answered
# with one token, scored by exact match. The oracle reads a reply only when it is one word (a
# final full stop aside); our reader also reads the one place or container the first sentence
# naming any names ("The grapefruit is in the green_bucket.", SmolLM2's usual shape).

def oracle(reply):
    words = reply.strip().rstrip(".").split()
    return words[0] if len(words) == 1 else None


def compare(row, reply):
    said = oracle(reply)
    if said is None:
        return "original reads nothing"
    rec = record_for(row, reply, BENCHMARK)
    return "agree" if rec["correct"] == (said == row["answer"]) else f"DISAGREE {reply!r}"


def test_untagged_shapes(rows):
    row = rows[0]
    gold = row["answer"]
    other = next(c for c in meta(row)["candidates"] if c != gold)
    cases = [
        (gold, True, "agree"), (f"{gold}.", True, "agree"), (other, False, "agree"),
        (f"The grapefruit is in the {gold}.", True, "original reads nothing"),
        (f"The answer is the {gold}.", True, "original reads nothing"),
        (f"It is in the {other}, not the {gold}.", False, "original reads nothing"),
    ]
    for reply, correct, verdict in cases:
        assert record_for(row, reply, BENCHMARK)["correct"] is correct, reply
        assert compare(row, reply) == verdict


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("tomi", compare)
