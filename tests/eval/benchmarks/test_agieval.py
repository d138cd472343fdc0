"""AGIEval loader: data/v1/<task>.jsonl, per-task letter accuracy, exact-set multi-answer items,
math-equivalent cloze answers, English and Chinese instructions."""
import json
import re

import pytest

from eval.answers import tagged
from eval.benchmarks.agieval import BENCHMARK, CHINESE_TASKS, ENGLISH_TASKS, load, strip_label
from eval.benchmarks.base import BenchmarkFormatError, original_record, record_for, scripted_records
from eval.rows import meta, validate_row


def _records(rows, answer_of):
    assert len({json.dumps(r["prompt"]) for r in rows}) == len(rows)
    return scripted_records(BENCHMARK, rows, answer_of)


def _perfect(r):
    return tagged(r['answer'], "solved")


def test_every_item_of_every_task_loads(sample, rows):
    files = sorted((sample / "data" / "v1").glob("*.jsonl"))
    assert len(files) == 20
    per_task = {}
    for r in rows:
        per_task[meta(r)["task"]] = per_task.get(meta(r)["task"], 0) + 1
    assert per_task == {f.stem: sum(1 for line in f.read_text().splitlines() if line.strip()) for f in files}
    for r in rows:
        m = meta(r)
        assert m["language"] == ("en" if m["task"] in ENGLISH_TASKS else "zh")
        assert m["task"] in ENGLISH_TASKS | CHINESE_TASKS
        user = r["prompt"][-1]["content"]
        assert ("问题：" in user) == (m["language"] == "zh")
        if m["kind"] == "cloze":
            assert r["answer_type"] == "number" and not r["choices"] and "$" not in r["answer"]
        else:
            assert not any(re.match(r"\s*\([A-Z]\)", c) for c in r["choices"])
            assert "\nA. " in user


def test_kinds_match_the_release(rows):
    kinds = {}
    for r in rows:
        kinds.setdefault(meta(r)["task"], set()).add(meta(r)["kind"])
    assert kinds["math"] == kinds["gaokao-mathcloze"] == {"cloze"}
    assert kinds["jec-qa-kd"] == kinds["jec-qa-ca"] == kinds["gaokao-physics"] == {"multi_answer"}
    assert kinds["lsat-ar"] == {"multiple_choice"}
    multi = [r for r in rows if len(meta(r).get("gold_letters", [])) > 1]
    assert multi and all(r["answer_type"] == "short" and r["answer"] == "".join(meta(r)["gold_letters"]) for r in multi)


def test_option_labels_are_stripped_from_the_texts(rows):
    by_id = {r["id"]: r for r in rows}
    assert by_id["agieval-logiqa-en-1"]["choices"][0].startswith("Chen Rui")
    assert by_id["agieval-gaokao-history-1"]["choices"][3].startswith("日本偷袭")  # labelled "(C)" in the release
    assert by_id["agieval-logiqa-zh-2"]["choices"][1].startswith("调查中")


def test_strip_label():
    assert strip_label("(A)40", 0) == "40"
    assert strip_label("(B) text", 1) == "text"
    assert strip_label("C．选项", 2) == "选项"
    assert strip_label("A Chen Rui", 0) == "Chen Rui"
    assert strip_label("A cat sat", 1) == "A cat sat"  # not the option's own letter: real text
    assert strip_label("(A)A", 0) == "A"


def test_perfect_answerer_scores_100(rows):
    metrics = BENCHMARK.metrics(_records(rows, _perfect))
    assert metrics["task_average"] == 1.0  # accuracy: tests/eval/test_benchmarks_all.py
    assert all(t["accuracy"] == 1.0 for t in metrics["by_task"].values())


def test_constant_answerer_scores_chance(rows):
    metrics = BENCHMARK.metrics(_records(rows, lambda r: tagged("A", "guess")))
    hit = [meta(r).get("gold_letters") == ["A"] for r in rows]  # cloze golds are never "A"
    assert metrics["accuracy"] == pytest.approx(sum(hit) / len(rows))
    for task, got in metrics["by_task"].items():
        mine = [h for r, h in zip(rows, hit) if meta(r)["task"] == task]
        assert got["accuracy"] == pytest.approx(sum(mine) / len(mine)), task


def test_breakdowns_appear(rows):
    metrics = BENCHMARK.metrics(_records(rows, _perfect))
    assert len(metrics["by_task"]) == 20
    assert set(metrics["by_language"]) == {"en", "zh"}
    assert set(metrics["by_kind"]) == {"multiple_choice", "multi_answer", "cloze"}


@pytest.mark.parametrize("reply,correct", [
    ("BD", True), ("B, D", True), ("D B", True), ("B和D", True), ("(B)(D)", True),
    ("B", False), ("BCD", False), ("B, B, D", False), ("BD because", False),
])
def test_multi_answer_needs_the_exact_set(rows, reply, correct):
    row = next(r for r in rows if r["id"] == "agieval-jec-qa-ca-2")
    assert meta(row)["gold_letters"] == ["B", "D"]
    rec = record_for(row, tagged(reply, "x"), BENCHMARK)
    assert rec["correct"] is correct and rec["format_ok"] is True


def test_single_gold_in_a_multi_answer_task_uses_the_shared_choice_rule(rows):
    row = next(r for r in rows if r["id"] == "agieval-jec-qa-kd-1")
    assert row["answer"] == "C" and row["answer_type"] == "choice"
    assert record_for(row, tagged("C", "x"), BENCHMARK)["correct"]
    assert not record_for(row, tagged("C, D", "x"), BENCHMARK)["correct"]


def test_cloze_answers_are_compared_as_math(rows):
    row = next(r for r in rows if meta(r)["task"] == "math" and r["answer"] == "0.015")
    for reply, ok in [("\\boxed{0.015}", True), ("$\\frac{3}{200}$", True), ("0.15", False)]:
        assert record_for(row, tagged(reply, "x"), BENCHMARK)["correct"] is ok
    word = next(r for r in rows if meta(r)["task"] == "math" and meta(r)["line"] == 4)
    assert word["answer"] == "parabola"  # released as \text{parabola}
    for reply, ok in [("\\text{parabola}", True), ("parabola", True), ("hyperbola", False)]:
        assert record_for(word, tagged(reply, "x"), BENCHMARK)["correct"] is ok


def test_corrupt_line_names_file_and_line(copy):
    f = copy / "data" / "v1" / "lsat-lr.jsonl"
    lines = f.read_text().splitlines()
    lines[2] = lines[2][:-10]
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 3: not valid JSON")):
        load(copy)


def test_label_outside_the_options(copy, edit_record):
    f = copy / "data" / "v1" / "sat-math.jsonl"
    edit_record(f, 4, lambda o: o.update(label="F"))
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 4: field 'label': F not among")):
        load(copy)


def test_missing_question_and_missing_cloze_answer(copy, edit_record):
    f = copy / "data" / "v1" / "aqua-rat.jsonl"
    edit_record(f, 2, lambda o: o.pop("question"))
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 2: field 'question': missing")):
        load(f)
    g = copy / "data" / "v1" / "math.jsonl"
    edit_record(g, 5, lambda o: o.update(answer=None))
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{g}: line 5: field 'answer': missing")):
        load(g)


def test_folder_without_tasks(tmp_path):
    with pytest.raises(BenchmarkFormatError, match="no <task>.jsonl files"):
        load(tmp_path)


# ---------------------------------------------------------------------------------------------
# The release's odd labels and the 21-task average, on a fixture in data/v1/ layout
# (tests/eval/fixtures/agieval), checked against the original scorer's rules.

FIXTURE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "agieval"


@pytest.fixture(scope="module")
def fixture_rows():
    return load(FIXTURE)


def test_odd_labels_load_with_one_warning(capsys):
    rows = load(FIXTURE)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: agieval: 4 item(s)")
    assert "gaokao-mathqa.jsonl lines 2, 3" in err[0] and "jec-qa-kd.jsonl line 2" in err[0]
    odd = {r["id"]: meta(r) for r in rows if "unscorable" in meta(r)}
    assert set(odd) == {"agieval-gaokao-mathqa-2", "agieval-gaokao-mathqa-3",
                        "agieval-jec-qa-ca-2", "agieval-jec-qa-kd-2"}
    assert odd["agieval-gaokao-mathqa-3"]["gold_letters"] == ["A", "B", "D"]  # "A B D"
    assert odd["agieval-jec-qa-kd-2"]["gold_letters"] == []
    for r in rows:
        validate_row(r)


def test_a_folder_holds_the_originals_21st_task(fixture_rows):
    tasks = {meta(r)["task"] for r in fixture_rows}
    assert "sat-en-without-passage" in tasks and len(tasks) == 6
    row = next(r for r in fixture_rows if meta(r)["task"] == "sat-en-without-passage")
    assert "lighthouse" not in row["prompt"][-1]["content"]  # its passage is null in the release


def test_metrics_match_the_original_rules_by_hand(fixture_rows):
    # ruixiangcui/AGIEval src/evaluation.py evaluate_single_sample: multi-answer tasks (jec-qa-*,
    # gaokao-physics) compare set(parsed letters) with set(label); every other choice task compares
    # the one parsed letter with the label string (so "AD" and "A B D" never match); math tasks use
    # is_equiv. dataset_loader.load_dataset_as_result_schema replaces a falsy label ([]) with the
    # null 'answer'. post_process_and_evaluation.py averages the per-task accuracies over its 21
    # datasets (sat-en-without-passage included).
    replies = {
        "agieval-gaokao-mathqa-1": "B",        # == "B": right
        "agieval-gaokao-mathqa-2": "AD",       # one letter "A" != "AD": wrong
        "agieval-gaokao-mathqa-3": "ABD",      # wrong for the same reason
        "agieval-jec-qa-ca-1": "B, D",         # {B, D} == {B, D}: right
        "agieval-jec-qa-ca-2": "B",            # {B} != {B, 。}: wrong
        "agieval-jec-qa-kd-1": "C",            # {C} == {C}: right
        "agieval-jec-qa-kd-2": "A",            # label [] -> answer None: wrong
        "agieval-sat-en-1": "A",               # right
        "agieval-sat-en-without-passage-1": "B",  # wrong
        "agieval-math-1": "\\frac{1}{2}",      # is_equiv: right
    }
    assert set(replies) == {r["id"] for r in fixture_rows}
    metrics = BENCHMARK.metrics(scripted_records(
        BENCHMARK, fixture_rows, lambda r: tagged(replies[r['id']], "x")))
    by_task = {t: v["accuracy"] for t, v in metrics["by_task"].items()}
    assert by_task == pytest.approx({"gaokao-mathqa": 1 / 3, "jec-qa-ca": 1 / 2, "jec-qa-kd": 1 / 2,
                                     "sat-en": 1.0, "sat-en-without-passage": 0.0, "math": 1.0})
    assert metrics["task_average"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 2 + 1 + 0 + 1) / 6)
    assert metrics["accuracy"] == pytest.approx(5 / 10)
    assert metrics["unscorable"] == 4


def test_a_perfect_answerer_cannot_score_what_the_original_cannot(fixture_rows):
    metrics = BENCHMARK.metrics(scripted_records(BENCHMARK, fixture_rows, _perfect))
    assert metrics["accuracy"] == pytest.approx(6 / 10) and metrics["unscorable"] == 4


def test_label_that_is_neither_letter_nor_list_still_fails(copy, edit_record):
    f = copy / "data" / "v1" / "sat-math.jsonl"
    edit_record(f, 1, lambda o: o.update(label=3))
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 1: field 'label': expected")):
        load(copy)


# ------------------------------------------- reading untagged replies as the original reads them
# ruixiangcui/AGIEval src/post_process.py, in each setting the paper reports:
# - single answer: few-shot settings search "answer is .*?([A-G])" (CoT: in the reply's last
#   line) and fall back, as the zero-shot settings do, on `find_first_capital_letter`: the first
#   character of the reply that is one of A-F;
# - multi-answer (jec-qa-*, gaokao-physics): every A-F of `\(*([A-F])\)*` in the reply, as a set;
# - cloze: `parse_math_answer` (zero-shot): see original_cloze below.
# The oracles are those rules, with the position of what they took, so a test can tell a letter
# from the capital that begins a word.

def oracle_letter(reply):
    lines = [line for line in reply.split("\n") if line.strip()]
    m = re.search("answer is .*?([A-G])", lines[-1]) if lines else None
    if m:
        return m.group(1), None
    for i, c in enumerate(reply):
        if c in "ABCDEF":
            return c, i
    return None, None


def oracle_letters(reply):
    return {m.group(1) for m in re.finditer(r"\(*([A-F])\)*", reply)}


def oracle_cloze(reply):
    s = reply
    for lead in ("The answer is therefore", "答案是"):
        if s.startswith(lead):
            s = s[len(lead):].strip()
        elif lead in s:
            s = s[s.rindex(lead) + len(lead):].strip()
    if "\\boxed" in s:
        start = s.rindex("\\boxed")
        depth, end = 0, None
        for i in range(start, len(s)):
            depth += {"{": 1, "}": -1}.get(s[i], 0)
            if s[i] == "}" and depth == 0:
                end = i
                break
        box = s[start:end + 1] if end is not None else ""
        if not (box.startswith("\\boxed{") and box.endswith("}")):
            return None
        inner = box[len("\\boxed{"):-1]
        return inner.split("=")[-1].lstrip(" ") if "=" in inner else inner
    found = re.findall(r"\$(.*)\$", s)
    if found and found[-1]:
        last = found[-1]
        return last.split("=")[-1].lstrip(" ") if "=" in last else last
    if "=" in s:
        return s.split("=")[-1].lstrip(" ").rstrip(".").split("\\n")[0]
    numbers = re.findall(r"(?:\$)?\d+(?:\.\d+)?(?![\w\d])", s)
    return numbers[-1] if numbers else None


def begins_a_word(reply, i):
    """The capital at i is part of a word ("Based"; a run of option letters such as "BD" is
    not a word) or is the article A ("A train leaves ...")."""
    start, end = i, i + 1
    while start > 0 and reply[start - 1].isalnum():
        start -= 1
    while end < len(reply) and reply[end].isalnum():
        end += 1
    if not all(c in "ABCDEFG" for c in reply[start:end]):
        return True
    word = reply[end:].split(maxsplit=1)
    return reply[start:end] == "A" and bool(word) and word[0].isalpha() and word[0].islower() and \
        word[0] not in ("or", "and", "is", "because")


def compare(row, reply):
    m = meta(row)
    rec = original_record(row, reply, BENCHMARK)
    if m["kind"] == "cloze":
        said = oracle_cloze(reply)
        if said is None:
            return "original reads nothing"
        if rec["extracted"] == said:
            return "agree"
        if rec["extracted"] == reply.strip():
            return "a short formula read whole"  # "y=\\pm\\sqrt{3}x": the original keeps "\\pm\\sqrt{3}x"
        if re.search(r"(?i)answer\s*(is|:)|答案", reply):
            return "an answer statement"  # "The answer is y = 2x+1." read up to the line's end
        return f"DISAGREE {said!r} vs {rec['extracted']!r}"
    if m["task"] in ("gaokao-physics", "jec-qa-ca", "jec-qa-kd"):
        said = oracle_letters(reply)
        if not said:
            return "original reads nothing"
        ours = set(rec["extracted"] or "") if rec["read"] == "fallback" else None
        if ours == said:
            return "agree"
        if any(begins_a_word(reply, x.start(1)) for x in re.finditer(r"\(*([A-F])\)*", reply)):
            return "capital in a word"
        if re.search(r"(?i)answer\s+is|答案是", reply):
            return "letters before the answer statement"
        return f"DISAGREE {sorted(said)} vs {ours}: {reply[:80]!r}"
    said, at = oracle_letter(reply)
    if said is None:
        return "original reads nothing"
    if rec["extracted"] == said:
        return "agree"
    if at is not None and begins_a_word(reply, at):
        return "capital in a word"
    if re.search(r"(?i)answer\s*(is|[:：])|答案", reply):
        return "letters before the answer statement"  # the zero-shot reader takes the first
    return f"DISAGREE {said} vs {rec['extracted']}: {reply[:80]!r}"


def test_untagged_shapes_agree_with_the_original(rows):
    single = next(r for r in rows if meta(r)["kind"] == "multiple_choice" and len(r["choices"]) >= 4
                  and not meta(r).get("unscorable"))
    a, b, c = single["choices"][:3]
    multi = next(r for r in rows if r["id"] == "agieval-jec-qa-ca-2")  # gold B, D
    cloze = next(r for r in rows if meta(r)["task"] == "math" and r["answer"] == "0.015")
    cases = [
        (single, f"(B) {b} because the passage says so.", "agree", "B"),
        (single, "The answer is C.", "agree", "C"),
        (single, "D", "agree", "D"),
        (single, f"Based on the passage, (C) {c}.", "capital in a word", "C"),  # original: B
        (single, "After reading it twice, I pick C.", "capital in a word", "C"),  # original: A
        (single, "I pick E.", "agree", "E"),  # E is read as the original does, and is wrong
        (single, "Option C looks tempting.\nFinal answer: D", "letters before the answer statement",
         "D"),
        (multi, "答案是BD", "agree", "BD"),
        (multi, "The answer is B and D.", "agree", "BD"),
        (multi, "(B)(D)", "agree", "BD"),
        (multi, "Option A is wrong, so the answer is BD.", "letters before the answer statement",
         "BD"),
        (cloze, "So the rate is 0.015.", "agree", "0.015"),
        (cloze, "We find $x = \\frac{3}{200}$, done.", "agree", "\\frac{3}{200}"),
        (cloze, "\\boxed{0.015}", "agree", "0.015"),
        (cloze, "The answer is therefore 15", "agree", "15"),
        (cloze, "no idea", "original reads nothing", "no idea"),
        (cloze, "y=\\pm\\sqrt{3}x", "a short formula read whole", "y=\\pm\\sqrt{3}x"),
        (cloze, "First 2+2 = 4, and then it follows.\nThe answer is y = 2x+1.", "an answer statement",
         "y = 2x+1"),
        (cloze, "Let me think.\n" * 30 + "Final answer: 0.015", "agree", "0.015"),
    ]
    for row, reply, verdict, extracted in cases:
        assert compare(row, reply) == verdict, (reply, compare(row, reply))
        if extracted is not None:
            assert original_record(row, reply, BENCHMARK)["extracted"] == extracted, reply
    assert original_record(multi, "答案是BD", BENCHMARK)["correct"]
    assert original_record(cloze, "We find $x = \\frac{3}{200}$, done.", BENCHMARK)["correct"]


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("agieval", compare)


def test_chance_follows_each_kind_of_item(rows, fixture_rows):
    from eval.benchmarks.agieval import chance_of

    assert BENCHMARK.chance is chance_of
    single = next(r for r in rows if meta(r)["kind"] == "multiple_choice")
    assert chance_of(single) == pytest.approx(1 / len(single["choices"]))
    multi = next(r for r in rows if r["id"] == "agieval-jec-qa-ca-2")  # 4 options: 15 sets
    assert chance_of(multi) == pytest.approx(1 / 15)
    assert chance_of(next(r for r in rows if meta(r)["kind"] == "cloze")) is None
    assert chance_of(next(r for r in fixture_rows if meta(r).get("unscorable"))) == 0.0
