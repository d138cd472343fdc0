"""BigToM loader: 24 conditions generated from each `;`-separated scenario row as the release's
generate_conditions.py does; two seeded-shuffled options; accuracy per condition."""
import csv
import re

import pytest

from eval.answers import tagged
from eval.benchmarks.base import record_for, scripted_metrics
from eval.benchmarks.bigtom import BENCHMARK, CONDITIONS, VARIABLES, load
from eval.rows import SYSTEM_PROMPT, meta, user_text


@pytest.fixture(scope="module")
def scenarios(sample):
    with open(sample / "bigtom.csv", newline="") as f:
        return [r for r in csv.reader(f, delimiter=";") if r]


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_scenario_gives_24_questions(rows, scenarios):
    assert len(scenarios) == 50 and len(rows) == 24 * len(scenarios)
    for r in rows:
        assert r["source"] == "bigtom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["answer_type"] == "choice" and len(r["choices"]) == 2 and "(A or B)" in user_text(r)


def by_cell(rows, scenario, init, variable, condition):
    return next(r for r in rows if meta(r)["scenario"] == scenario and meta(r)["init_belief"] == init
                and meta(r)["variable"] == variable and meta(r)["condition"] == condition)


def test_conditions_follow_the_release_generator(rows, scenarios):
    s = scenarios[0]
    sentences = s[0].split(".")
    gold = lambda r: r["choices"][ord(r["answer"]) - 65]  # noqa: E731

    tb = by_cell(rows, 1, "hidden", "forward_belief", "true_belief")
    story = ".".join(sentences[:3]) + "." + sentences[4] + ". " + s[1]
    assert f"Story:\n{story}\n" in user_text(tb) and sentences[3] not in user_text(tb)
    assert gold(tb) == s[8]  # saw the event: the aware belief

    fb = by_cell(rows, 1, "shown", "forward_belief", "false_belief")
    assert sentences[3].strip() in user_text(fb) and s[2] in user_text(fb) and gold(fb) == s[11]

    fa = by_cell(rows, 1, "shown", "forward_action", "false_belief")
    assert s[7] in user_text(fa) and gold(fa) == s[13] and set(fa["choices"]) == {s[10], s[13]}

    bb = by_cell(rows, 1, "hidden", "backward_belief", "true_belief")
    assert s[3] in user_text(bb) and gold(bb) == s[8]

    for condition in ("true_control", "false_control"):
        ctl = by_cell(rows, 1, "hidden", "forward_belief", condition)
        assert s[14] in user_text(ctl) and sentences[4].strip() not in user_text(ctl)
        assert gold(ctl) == s[11]  # nothing relevant changed: the initial belief stays


def test_perfect_answerer_scores_100_by_option_text(rows):
    # by letter: tests/eval/test_benchmarks_all.py
    by_text = run(rows, lambda r: tagged(r['choices'][ord(r['answer']) - 65], "t"))
    assert by_text["accuracy"] == 1.0


@pytest.mark.parametrize("letter", "AB")
def test_seeded_order_puts_the_gold_under_each_letter_about_half_the_time(rows, letter):
    # that a constant letter scores this share: tests/eval/test_benchmarks_all.py
    share = sum(r["answer"] == letter for r in rows) / len(rows)
    assert 0.4 < share < 0.6


def test_breakdown_per_condition(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_condition"]) == set(CONDITIONS)
    assert set(metrics["by_variable"]) == set(VARIABLES)
    assert set(metrics["by_init_belief"]) == {"hidden", "shown"}
    cells = metrics["by_variable_condition"]
    assert len(cells) == 12 and all(v["n"] == 100 for v in cells.values())


def test_option_order_is_seeded(sample, rows):
    assert [r["answer"] for r in load(sample)] == [r["answer"] for r in rows]
    assert [r["answer"] for r in load(sample, seed=7)] != [r["answer"] for r in rows]


@pytest.fixture
def release(copy):
    return copy / "bigtom.csv"


def test_short_row_names_file_and_line(release, one_line_error):
    lines = release.read_text().splitlines()
    lines[2] = ";".join(lines[2].split(";")[:10])
    release.write_text("\n".join(lines) + "\n")
    msg = one_line_error(release)
    assert "bigtom.csv: line 3: 10 ';'-separated columns" in msg


def test_story_without_five_sentences_and_empty_column(release, one_line_error):
    lines = release.read_text().splitlines()
    cells = lines[4].split(";")
    cells[0] = "Only one sentence here"
    lines[4] = ";".join(cells)
    release.write_text("\n".join(lines) + "\n")
    assert "bigtom.csv: line 5: column 0 (story)" in one_line_error(release)
    cells = lines[1].split(";")
    cells[14] = " "
    lines[4] = lines[0]
    lines[1] = ";".join(cells)
    release.write_text("\n".join(lines) + "\n")
    assert "bigtom.csv: line 2: column 14 (random_event) is empty" in one_line_error(release)


# ------------------------------------------- reading untagged replies as the original reads them
# cicl-stanford/procedural-evals-tom code/src/evaluate_conditions.py (mcq): the options are shown
# as "a)<text>" and "b)<text>"; the reply, lower-cased, is right when it contains the correct
# option's key ("a)" or "b)"), else wrong when it contains the other key, else a language model
# (text-davinci-003 with prompt_instructions/grade.txt) grades it. The oracle is the key check;
# it returns None where the grader would decide.

def oracle(row, reply):
    keys = {"A": "a)", "B": "b)"}
    gold, other = keys[row["answer"]], keys["B" if row["answer"] == "A" else "A"]
    low = reply.lower()
    return True if gold in low else False if other in low else None


def compare(row, reply):
    said = oracle(row, reply)
    if said is None:
        return "original asks its grader"
    ours = record_for(row, reply, BENCHMARK)["correct"]
    if ours == said:
        return "agree"
    low = reply.lower()
    if "a)" in low and "b)" in low:
        return "both labels"  # the original finds the correct key first: right; ours: a hedge
    if re.search(r"[a-z0-9][ab]\)", low):
        return "key inside a word"
    return f"DISAGREE {said} vs {ours}: {reply[:80]!r}"


def test_untagged_shapes_agree_with_the_original(rows):
    row = rows[0]
    gold = ord(row["answer"]) - 65
    right, wrong = row["choices"][gold], row["choices"][1 - gold]
    g, o = row["answer"], "B" if row["answer"] == "A" else "A"
    cases = [
        (f"({g}) {right} because she saw it happen.", True, "agree"),
        (f"({o}) {wrong} because she did not see it.", False, "agree"),
        (f"{g.lower()}) {right}", True, "agree"),
        (f"{g}) {right}. Not {o}) {wrong}.", False, "both labels"),
        (f"{g}. {right}", True, "original asks its grader"),
        (f"{right}", True, "original asks its grader"),
    ]
    for reply, correct, verdict in cases:
        assert record_for(row, reply, BENCHMARK)["correct"] is correct, reply
        assert compare(row, reply) == verdict, reply


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("bigtom", compare)
