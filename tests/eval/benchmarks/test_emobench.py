"""EmoBench loader: the shared sample loads, scores as the original does (EU asks the emotion and
its cause in one prompt and counts when both are right), and bad input fails with one line naming
file, line and field."""
import json
import re

import pytest

from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, record_for, scripted_metrics
from eval.benchmarks.emobench import BENCHMARK, load
from eval.rows import SYSTEM_PROMPT, meta


def _lines(path):
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(rows, answer_of):
    """Ask a scripted backend (the runner's path) and score every completion."""
    assert len({json.dumps(r["prompt"]) for r in rows}) == len(rows), "two rows share a prompt"
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_sample_line_loads(sample, rows):
    n_ea = len(_lines(sample / "data" / "EA.jsonl"))
    n_eu = len(_lines(sample / "data" / "EU.jsonl"))
    assert len(rows) == n_ea + n_eu  # an EU line is one row asking both questions
    for r in rows:
        assert r["source"] == "emobench"
        assert r["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        m = meta(r)
        assert {"task", "language", "category", "qid"} <= set(m)
        assert (m["task"] == "EU") == (r["answer_type"] == "short" and "options" in m)
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
    metrics = _run(rows, lambda r: tagged(r['answer'], "I read the key."))
    assert all(t["accuracy"] == 1.0 for t in metrics["by_task"].values())
    assert set(metrics["by_task"]) == {"EA", "EU", "EU-emotion", "EU-cause"}


def test_constant_answerer_scores_chance(rows):
    metrics = _run(rows, lambda r: "<think>always the first</think><answer>"
                   + ("A" if meta(r)["task"] == "EA" else "A; A") + "</answer>")
    ea = [r for r in rows if meta(r)["task"] == "EA"]
    eu = [meta(r)["gold"] for r in rows if meta(r)["task"] == "EU"]
    ea_acc = sum(r["answer"] == "A" for r in ea) / len(ea)
    both_acc = sum(g == {"emotion": "A", "cause": "A"} for g in eu) / len(eu)
    assert metrics["by_task"]["EA"]["accuracy"] == pytest.approx(ea_acc)
    assert metrics["by_task"]["EU"]["accuracy"] == pytest.approx(both_acc)
    assert metrics["by_task"]["EU"]["n"] == len(eu)
    assert metrics["by_task"]["EU-emotion"]["accuracy"] == pytest.approx(
        sum(g["emotion"] == "A" for g in eu) / len(eu))
    assert metrics["accuracy"] == pytest.approx((ea_acc + both_acc) / 2)


def test_eu_needs_both_parts(rows):
    # right emotion, wrong cause: the item is wrong, as in the original's joint score
    def answer(r):
        m = meta(r)
        if m["task"] == "EA":
            return f"<answer>{r['answer']}</answer>"
        wrong = "B" if m["gold"]["cause"] == "A" else "A"
        return tagged(f"Q1: {m['gold']['emotion']}, Q2: {wrong}", "x")

    metrics = _run(rows, answer)
    assert metrics["by_task"]["EU-emotion"]["accuracy"] == 1.0
    assert metrics["by_task"]["EU-cause"]["accuracy"] == 0.0
    assert metrics["by_task"]["EU"]["accuracy"] == 0.0


def test_eu_asks_emotion_and_cause_in_one_prompt(sample, rows):
    first = json.loads(_lines(sample / "data" / "EU.jsonl")[0])
    row = next(r for r in rows if r["id"] == f"emobench-EU-{first['language']}-{first['qid']}")
    user = row["prompt"][-1]["content"]
    emotions = user.index("Question 1")
    causes = user.index("Question 2")
    assert first["scenario"] in user and emotions < causes
    for letter, text in zip("ABCDEF", first["emotion_choices"]):
        assert user.index(f"\n{letter}. {text.strip()}", emotions) < causes
    for letter, text in zip("ABCDEF", first["cause_choices"]):
        assert user.index(f"\n{letter}. {text.strip()}", causes) > causes
    gold = meta(row)["gold"]
    assert first["emotion_choices"][ord(gold["emotion"]) - ord("A")] == first["emotion_label"]
    assert first["cause_choices"][ord(gold["cause"]) - ord("A")] == first["cause_label"]
    assert row["answer"] == f"{gold['emotion']}; {gold['cause']}"


@pytest.mark.parametrize("reply, emotion, cause", [
    ("B; D", "B", "D"),
    ("Q1: B, Q2: D", "B", "D"),
    ('{"answer_q1": "B", "answer_q2": "D"}', "B", "D"),  # the original's own JSON answer
    ("1. (B) Fear\n2. (D) She has doubts about her painting", "B", "D"),
    ("Question 1: Fear. Question 2: She has doubts about her painting", "B", "D"),  # option text
    ("问题1：B；问题2：D", "B", "D"),
    ("B D", "B", "D"),
    ("B", None, None),  # one answer for two questions
    ("B; D; A", None, None),
    ("A or B; D", None, "D"),
])
def test_eu_reply_is_read_as_two_letters(reply, emotion, cause):
    from eval.benchmarks.emobench import score

    row = next(r for r in BENCHMARK.load_rows() if r["id"] == "emobench-EU-en-11")
    rec = score(row, tagged(reply, "x"))
    assert (rec["emotion_choice"], rec["cause_choice"]) == (emotion, cause)


# Release-layout fixture, scored by hand with the original rule (Sahandfer/EmoBench src/data.py,
# evaluate_results: EA correct when the answer letter equals letters[choices.index(label)]; EU
# correct when emo_answer == emo_label AND cause_answer == cause_label; "Overall" = mean per task
# and language).
_EA = [{"qid": "1", "language": "en", "category": "Personal-Self", "question type": "Response",
        "scenario": "S1", "subject": "Ann", "choices": ["a1", "a2", "a3", "a4"], "label": "a2"},
       {"qid": "2", "language": "en", "category": "Social-Others", "question type": "Action",
        "scenario": "S2", "subject": "Bo", "choices": ["b1", "b2", "b3", "b4"], "label": "b4"}]
_EU = [{"qid": str(q), "language": "en", "coarse_category": "Complex Emotions",
        "finegrained_category": "Emotion Transition", "scenario": f"S{q}", "subject": "Cy",
        "emotion_choices": ["Joy", "Fear", "Anger", "Pride"], "emotion_label": "Fear",
        "cause_choices": ["c1", "c2", "c3", "c4"], "cause_label": "c3"} for q in (10, 11, 12, 13)]
# replies: EA 1 right (B), EA 2 wrong (A); EU 10 both right, 11 emotion only, 12 cause only,
# 13 both right written as option text
_REPLIES = {"emobench-EA-en-1": "B", "emobench-EA-en-2": "A", "emobench-EU-en-10": "B; C",
            "emobench-EU-en-11": "B; D", "emobench-EU-en-12": "A; C",
            "emobench-EU-en-13": "Q1: Fear, Q2: c3"}


def test_release_fixture_matches_the_original_rule(tmp_path):
    data = tmp_path / "EmoBench" / "data"
    data.mkdir(parents=True)
    for name, items in (("EA", _EA), ("EU", _EU)):
        (data / f"{name}.jsonl").write_text(
            "".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    rows = BENCHMARK.load_rows(tmp_path / "EmoBench")
    metrics = _run(rows, lambda r: tagged(_REPLIES[r['id']], "x"))
    # by hand: EA 1/2; EU: items 10 and 13 right = 2/4; emotion right 10, 11, 13 = 3/4
    assert metrics["by_task"]["EA"]["accuracy"] == 0.5
    assert metrics["by_task"]["EU"]["accuracy"] == 0.5
    assert metrics["by_task"]["EU-emotion"]["accuracy"] == 0.75
    assert metrics["by_task"]["EU-cause"]["accuracy"] == 0.75
    assert metrics["accuracy"] == 0.5
    assert metrics["tasks"]["EU"]["by_category"]["Complex Emotions"]["accuracy"] == 0.5


def test_languages_option_keeps_one_language(sample):
    en = load(sample, languages=["en"])
    assert en and {meta(r)["language"] for r in en} == {"en"}
    assert len(en) == len(load(sample)) // 2
    with pytest.raises(ValueError, match="languages must be some of en, zh"):
        load(sample, languages=["fr"])


def test_breakdowns_appear(rows):
    metrics = _run(rows, lambda r: tagged(r['answer'], "x"))
    assert set(metrics["by_language"]) == {"en", "zh"}
    assert {"by_language", "by_category", "by_question_type"} <= set(metrics["tasks"]["EA"])
    assert {"by_language", "by_category"} <= set(metrics["tasks"]["EU"])
    assert set(metrics["tasks"]["EA"]["by_question_type"]) == {"Action", "Response"}


def test_loads_a_single_task_file(sample):
    eu = load(sample / "data" / "EU.jsonl")
    assert {meta(r)["task"] for r in eu} == {"EU"}


def test_corrupt_line_names_file_and_line(copy, edit_line):
    f = copy / "data" / "EA.jsonl"
    edit_line(f, 4, lambda line: line[: len(line) // 2])
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 4: not valid JSON")):
        load(copy)


def test_missing_field_names_the_field(copy, edit_line):
    f = copy / "data" / "EU.jsonl"

    def drop_cause(line):
        obj = json.loads(line)
        del obj["cause_label"]
        return json.dumps(obj, ensure_ascii=False)

    edit_line(f, 7, drop_cause)
    with pytest.raises(BenchmarkFormatError) as e:
        load(copy)
    msg = str(e.value)
    assert msg.startswith(f"{f}: line 7:") and "'cause_label'" in msg and "\n" not in msg


def test_gold_not_among_options(copy, edit_line):
    f = copy / "data" / "EA.jsonl"

    def relabel(line):
        obj = json.loads(line)
        obj["label"] = "none of these"
        return json.dumps(obj, ensure_ascii=False)

    edit_line(f, 2, relabel)
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 2: field 'label'")):
        load(copy)


def test_folder_without_release_files(tmp_path):
    with pytest.raises(BenchmarkFormatError, match="no EA.jsonl or EU.jsonl"):
        load(tmp_path)


# ------------------------------------------- reading untagged replies as the original reads them
# Sahandfer/EmoBench src/model.py gen_response -> utils.parse_json_response: the reply's ```json
# block, else the whole reply, must parse as JSON, else the answers are "" (wrong); data.py
# evaluate_results compares `answer` (EA), `answer_q1` and `answer_q2` (EU) with the gold letters
# as written. The oracle is that rule: None where the reply is no such JSON.

def oracle(row, reply):
    text = reply
    if "```json" in text:
        m = re.search(r"```json\s*([\s\S]*?)```", text, re.DOTALL)
        text = m.group(0).replace("```json", "").replace("```", "") if m else ""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    m = meta(row)
    if m["task"] == "EA":
        return obj.get("answer", "") == row["answer"]
    return obj.get("answer_q1", "") == m["gold"]["emotion"] and \
        obj.get("answer_q2", "") == m["gold"]["cause"]


def compare(row, reply):
    said = oracle(row, reply)
    if said is None:
        return "original reads nothing"
    ours = record_for(row, reply, BENCHMARK)["correct"]
    if ours == said:
        return "agree"
    obj = json.loads(re.sub(r"(?s).*```json|```.*", "", reply) if "```json" in reply else reply)
    values = [obj.get(k) for k in ("answer", "answer_q1", "answer_q2") if k in obj]
    if any(not (isinstance(v, str) and re.fullmatch(r"[A-Z]", v)) for v in values):
        return "JSON value more than a letter"  # "B) Fear": the original wants exactly "B"
    return f"DISAGREE {said} vs {ours}: {reply[:80]!r}"


def _eu(rows, qid):
    return next(r for r in rows if r["id"] == f"emobench-EU-en-{qid}")


def test_long_perfect_eu_replies_are_read(rows):
    # EU-en-22 and EU-en-191 (and 21, 36, 81 of the full release) have long options: a perfect
    # reply that writes both options out is longer than the shared fallback's 200 characters
    for qid in (22, 191):
        row = _eu(rows, qid)
        m = meta(row)
        e, c = m["gold"]["emotion"], m["gold"]["cause"]
        emotion = m["options"]["emotion"][ord(e) - 65]
        cause = m["options"]["cause"][ord(c) - 65]
        for reply in (f"{e}. {emotion}; {c}. {cause}",
                      f"Question 1: {e}) {emotion}\nQuestion 2: {c}) {cause}",
                      f"1. {e}. {emotion}\n2. {c}. {cause}. As question 2 asks, this is why.",
                      f"Q1: {emotion}\nQ2: {cause}"):
            assert len(reply) > 200
            rec = record_for(row, reply, BENCHMARK)
            assert rec["correct"] and rec["read"] == "fallback", reply
            assert compare(row, reply) == "original reads nothing"


def test_json_replies_agree_with_the_original(rows, check_cases):
    eu = _eu(rows, 22)
    e, c = meta(eu)["gold"]["emotion"], meta(eu)["gold"]["cause"]
    other = "A" if c != "A" else "B"
    ea = next(r for r in rows if meta(r)["task"] == "EA")
    cases = [
        (eu, json.dumps({"answer_q1": e, "answer_q2": c}), True, "agree"),
        (eu, "```json\n" + json.dumps({"reasoning": "In question 1 ...", "answer_q1": e,
                                        "answer_q2": c}) + "\n```", True, "agree"),
        (eu, json.dumps({"answer_q1": e, "answer_q2": other}), False, "agree"),
        (eu, json.dumps({"answer_q1": f"{e}) it", "answer_q2": c}), True,
         "JSON value more than a letter"),
        (ea, json.dumps({"answer": ea["answer"]}), True, "agree"),
        (ea, ea["answer"], True, "original reads nothing"),
    ]
    check_cases(cases, compare, BENCHMARK)


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("emobench", compare)


def test_chance_needs_both_eu_letters(rows):
    from eval.benchmarks.emobench import chance_of

    eu = _eu(rows, 22)
    assert BENCHMARK.chance is chance_of and chance_of(eu) == pytest.approx(1 / 36)  # 6 x 6
    ea = next(r for r in rows if meta(r)["task"] == "EA")
    assert chance_of(ea) == pytest.approx(1 / len(ea["choices"]))
