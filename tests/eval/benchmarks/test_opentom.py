"""OpenToM loader: per-genre question files keyed by story id, macro-F1 per genre and order with
the release's treatment of unparsable answers."""
import json
import shutil
from collections import Counter

import pytest

from eval.answers import tagged
from eval.benchmarks._common import f1
from eval.benchmarks.base import original_record, record_for, scripted_records
from eval.benchmarks.opentom import BENCHMARK, QUESTION_FILES, load
from eval.rows import SYSTEM_PROMPT, meta, user_text

TASKS = {"location_coarse/first", "location_coarse/second", "location_fine/first",
         "location_fine/second", "multihop/first", "multihop/second", "attitude"}


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path() / "opentom_data"


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows()


def records(rows, answer_of):
    return scripted_records(BENCHMARK, rows, answer_of)


def answer(text):
    return tagged(text, "t")


def test_every_question_loads(sample, rows):
    files = {stem: sample / (f"{stem}_new.json" if "fg" in stem else f"{stem}.json") for stem in QUESTION_FILES}
    expected = sum(len(qs) for f in files.values() for qs in json.loads(f.read_text()).values())
    assert len(rows) == expected == 98
    stories = json.loads((sample / "meta_data.json").read_text())
    for r in rows:
        assert r["source"] == "opentom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        m = meta(r)
        assert stories[m["story"]]["narrative"].strip() in user_text(r)
        assert m["gold_label"] in m["labels"]  # every fine gold of the sample names a place
    assert {meta(r)["task"] for r in rows} == TASKS
    types = Counter((meta(r)["task"], r["answer_type"]) for r in rows)
    assert types[("location_coarse/first", "yes_no")] == 14
    assert types[("location_fine/second", "short")] == 14
    assert types[("attitude", "choice")] == 14


def test_long_narratives(sample, rows):
    long_rows = load(sample.parent, long=True)
    long_keys = json.loads((sample / "meta_data_long.json").read_text())
    assert len(long_rows) == 7 * len(long_keys) == 28
    assert {meta(r)["narrative"] for r in long_rows} == {"long"}
    one = long_rows[0]
    assert long_keys[meta(one)["story"]]["narrative"].strip() in user_text(one)


def test_perfect_answerer_scores_100(rows):
    metrics = BENCHMARK.metrics(records(rows, lambda r: answer(r["answer"])))
    assert metrics["macro_f1"] == metrics["macro_f1_strict"] == metrics["accuracy"] == 1.0
    assert set(metrics["by_task"]) == TASKS and metrics["unparsed"] == 0.0
    assert all(t["macro_f1"] == 1.0 for t in metrics["by_task"].values())
    assert set(metrics["by_subtype"]) >= {"fullness", "accessibility", "attitude"}
    assert set(metrics["by_perspective"]) <= {"mover", "observer", "narrator"}
    # phrasing variants the shared parser accepts score the same
    variants = BENCHMARK.metrics(records(rows, lambda r: answer(
        f"on the {r['answer']}" if r["answer_type"] == "short"
        else r["answer"].capitalize() + "." if r["answer_type"] == "yes_no"
        else r["choices"][ord(r["answer"]) - 65])))
    assert variants["macro_f1"] == 1.0


def constant_f1(golds, label):
    """Macro-F1 of predicting `label` for every item, computed in closed form: only the class
    `label` has predictions, with precision = its gold share and recall 1."""
    share = golds.count(label) / len(golds)
    f1_label = 2 * share / (1 + share) if share else 0.0
    return f1_label / len(set(golds) | {label})


def test_constant_answerers_score_closed_form_f1(rows):
    yes = BENCHMARK.metrics(records(rows, lambda r: answer("yes")))
    a = BENCHMARK.metrics(records(rows, lambda r: answer("A")))
    for order in ("first", "second"):
        golds = [meta(r)["gold_label"] for r in rows if meta(r)["task"] == f"location_coarse/{order}"]
        task = yes["by_task"][f"location_coarse/{order}"]
        assert task["macro_f1"] == pytest.approx(constant_f1(golds, "yes"))
        assert task["accuracy"] == pytest.approx(golds.count("yes") / len(golds))
        assert task["unparsed"] == 0.0
        # 'A' names no yes/no class: all unparsed, left out of the F1 as the release does
        assert a["by_task"][f"location_coarse/{order}"]["unparsed"] == 1.0
        assert a["by_task"][f"location_coarse/{order}"]["macro_f1_strict"] == 0.0
    golds = [meta(r)["gold_label"] for r in rows if meta(r)["task"] == "attitude"]
    assert a["by_task"]["attitude"]["macro_f1"] == pytest.approx(constant_f1(golds, "positive"))
    assert yes["by_task"]["attitude"]["unparsed"] == 1.0
    expected_acc = sum(r["answer"] == "A" for r in rows) / len(rows)
    assert a["accuracy"] == pytest.approx(expected_acc)
    assert a["macro_f1"] == pytest.approx(sum(t["macro_f1"] for t in a["by_task"].values()) / 7)


def test_fine_location_answers_are_labelled_by_role(rows):
    fine = [r for r in rows if meta(r)["genre"] == "location_fine"]

    def other(r):
        return next(role for role in ("initial", "new") if role != meta(r)["gold_label"])

    def apart(r):  # places sharing no word: naming one is no tie with the other
        words = [set(p.lower().replace("'s", "").split()) for p in meta(r)["places"].values()]
        return not words[0] & words[1]

    fine = [r for r in fine if apart(r)]
    assert len(fine) >= 20
    recs = records(fine, lambda r: answer(f"in the {meta(r)['places'][other(r)]}"))
    assert all(rec["label"] == other(r) and not rec["correct"] for rec, r in zip(recs, fine))
    recs = records(fine, lambda r: answer("under the sofa"))
    assert all(rec["label"] == "neither" for rec in recs)  # the original's tie class, not unparsed
    metrics = BENCHMARK.metrics(recs)
    assert metrics["unparsed"] == 0.0 and metrics["macro_f1"] == 0.0


FIXTURE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "opentom"


def test_fixture_scores_as_the_original_evaluator_by_hand():
    # seacowx/OpenToM src/evaluate/opentom_evaluator.py: check_answer_for_fg_location classes a
    # fine answer by compute_lexical_overlap with each place after remove_determinant (which cuts
    # a leading 'a' with no word boundary: 'attic' -> 'ttic'), ties -> class 3; a gold naming
    # neither place is None and dropped. src/evaluate.py: sklearn f1_score(average='macro') per
    # question type; multi-hop fullness and accessibility of one order pooled into classes 1-3
    # (less full/more accessible, more full/less accessible, equally); '|' golds -> equally
    # accessible.
    rows = load(FIXTURE)
    assert len(rows) == 3 + 3 + 6 + 4 + 4 + 3 + 3
    replies = {
        # fine, first order: gold new, initial, new, initial, new, initial(attic)
        "11000001/location_fg_fo/0": "the fridge",         # new
        "11000001/location_fg_fo/1": "the fridge",         # new (gold initial)
        "11000002/location_fg_fo/0": "his backpack",       # 1/3 of Carl's own backpack: new
        "11000002/location_fg_fo/1": "under the bed",      # no word of either: class 3
        "11000003/location_fg_fo/0": "closet",             # new
        "11000003/location_fg_fo/1": "attic",              # 'ttic' shares no word: class 3
        # multi-hop, first order: gold M1 (less full), M3 ('|'), M2 (less accessible), M2 (more full)
        "11000001/multihop_fo/0": "less full",             # M1
        "11000001/multihop_fo/1": "more accessible",       # M1
        "11000002/multihop_fo/0": "less accessible",       # M2
        "11000003/multihop_fo/0": "less full",             # M1
    }
    by_id = {r["id"].removeprefix("opentom/normal/"): r for r in rows}

    def reply(r):
        key = r["id"].removeprefix("opentom/normal/")
        if key in replies:
            return answer(replies[key])
        return answer(r["answer"])  # every other question answered right

    metrics = BENCHMARK.metrics(scripted_records(BENCHMARK, rows, reply))
    tasks = metrics["by_task"]
    # fine/first: gold [n,i,n,i,n,i] pred [n,n,n,3,n,3]: class n P=3/4 R=1 -> 6/7; i and 3 -> 0
    assert tasks["location_fine/first"]["macro_f1"] == pytest.approx((6 / 7) / 3)
    # fine/second: the 'garden shed' gold names neither place: left out, the rest right
    assert tasks["location_fine/second"]["macro_f1"] == 1.0
    assert tasks["location_fine/second"]["no_gold_class"] == 1
    # multihop/first merged: gold [M1,M3,M2,M2] pred [M1,M1,M2,M1]: M1 1/2, M2 2/3, M3 0
    assert tasks["multihop/first"]["macro_f1"] == pytest.approx((1 / 2 + 2 / 3 + 0) / 3)
    # (six unmerged classes would give 1/3); each subtype alone, as evaluate.py also prints:
    # fullness gold [less full, more full] pred [less full, less full] -> (2/3 + 0) / 2;
    # accessibility gold [equally, less] pred [more, less] -> (0 + 1 + 0) / 3
    hops = metrics["by_multihop_task"]
    assert hops["multihop/first/fullness"]["macro_f1"] == pytest.approx((2 / 3) / 2)
    assert hops["multihop/first/accessibility"]["macro_f1"] == pytest.approx(1 / 3)
    for task in ("location_coarse/first", "location_coarse/second", "multihop/second", "attitude"):
        assert tasks[task]["macro_f1"] == 1.0, task
    assert metrics["macro_f1"] == pytest.approx((5 + 2 / 7 + 7 / 18) / 7)
    assert metrics["unparsed"] == 0.0
    assert meta(by_id["11000003/location_fg_fo/1"])["gold_label"] == "initial"


def test_attitude_questions_are_asked_as_released():
    row = next(r for r in load(FIXTURE) if meta(r)["genre"] == "attitude")
    assert "Assume" not in user_text(row)
    assert user_text(row).rstrip().endswith("Answer with the letter of the correct option (A, B or C).")


def test_opentom_long_is_a_benchmark_of_its_own():
    from eval.benchmarks import get_benchmark
    long = get_benchmark("opentom_long")
    rows = long.load_rows(FIXTURE)
    assert {meta(r)["story"] for r in rows} == {"11000001"} and len(rows) == 9
    assert all(r["id"].startswith("opentom/long/") for r in rows)
    assert "nobody mentioned the apple" in user_text(rows[0])
    assert long.primary_metric == "macro_f1" and long.aggregate is BENCHMARK.aggregate


def test_f1_matches_scikit_learn_conventions():
    # worked by hand: class a p=1 r=1/2, class b p=1/2 r=1 -> both 2/3
    assert f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(2 / 3)
    assert f1(["a", "a", "b"], ["a", "b", "b"], "weighted") == pytest.approx(2 / 3)
    # a predicted class with no gold counts in the macro average with F1 0
    assert f1(["a", "a"], ["a", "c"]) == pytest.approx((2 / 3) / 2)
    assert f1(["a", "a"], ["a", "c"], labels={"a"}) == pytest.approx(2 / 3)
    assert f1(["a", "b", "b", "b"], ["b", "b", "b", "b"], "weighted") == pytest.approx(0.75 * (2 * 0.75 / 1.75))


def test_unknown_story_and_bad_answer(copy, one_line_error):
    attitude = json.loads((copy / "attitude.json").read_text())
    attitude["999"] = attitude.pop(next(iter(attitude)))
    (copy / "attitude.json").write_text(json.dumps(attitude, indent=4))
    assert "attitude.json: record '999': story id not found in meta_data.json" in one_line_error(copy)

    multihop = json.loads((copy / "multihop_fo.json").read_text())
    key = sorted(multihop)[2]
    multihop[key][0]["answer"] = "half full"
    (copy / "multihop_fo.json").write_text(json.dumps(multihop, indent=4))
    (copy / "attitude.json").unlink()
    msg = one_line_error(copy)
    assert "attitude.json: missing file" in msg
    shutil.copy(BENCHMARK.default_path() / "opentom_data" / "attitude.json", copy / "attitude.json")
    msg = one_line_error(copy)
    assert f"multihop_fo.json: record '{key}' question 0: field 'answer' 'half full'" in msg


def test_corrupt_json_and_missing_meta(copy, tmp_path, one_line_error):
    text = (copy / "location_cg_so.json").read_text().splitlines()
    text[4] = text[4].replace('"', "", 1)
    (copy / "location_cg_so.json").write_text("\n".join(text))
    assert "location_cg_so.json: line 5: not valid JSON" in one_line_error(copy)
    assert "no meta_data.json" in one_line_error(tmp_path / "elsewhere")


def test_release_quirks_in_multihop_answers(copy, one_line_error):
    multihop = json.loads((copy / "multihop_so.json").read_text())
    access = [k for k, qs in multihop.items() if "accessibility" in qs[0]["question"]]
    assert len(access) >= 2
    multihop[access[0]][0]["answer"] = "more accessible|less accessible"
    multihop[access[1]][0]["answer"] = ["corrupted", "less accessible"]
    (copy / "multihop_so.json").write_text(json.dumps(multihop, indent=4))
    got = {meta(r)["story"]: meta(r)["gold_label"] for r in load(copy) if meta(r)["task"] == "multihop/second"}
    assert got[access[0]] == "equally accessible" and got[access[1]] == "less accessible"
    multihop[access[1]][0]["answer"] = ["corrupted"]
    (copy / "multihop_so.json").write_text(json.dumps(multihop, indent=4))
    assert "field 'answer' lists no single answer" in one_line_error(copy)


# ------------------------------------------- reading untagged replies as the original reads them
# seacowx/OpenToM src/evaluate/opentom_evaluator.py classifies the whole reply (lower-cased):
# - check_answer_for_cg_location: "no" found and "yes" not -> no; "yes" and not "no" -> yes;
#   else corrupted (substrings: the "no" of "not" and "know" counts);
# - check_answer_for_fg_location: the place sharing the larger part of its words (a tie: a class
#   of its own), in fine_answer_role;
# - check_fullness_answer (full stops removed): "less full"/"emptier"/"more empty", else "more
#   full"/"fuller", else "equally full", else corrupted; check_accessibility_answer: "more
#   accessible", else "less accessible", else "equally accessible", else corrupted;
# - check_attitude_answer: the text after the last colon of the last paragraph, up to its first
#   full stop: a/b/c -> positive/neutral/negative, else the one of the three words it contains.
# The oracle is those rules; None is 'corrupted'.

def oracle(row, reply):
    m = meta(row)
    low = reply.lower()
    if m["genre"] == "location_coarse":
        return "no" if "no" in low and "yes" not in low else \
            "yes" if "yes" in low and "no" not in low else None
    if m["genre"] == "location_fine":
        from eval.benchmarks.opentom import fine_answer_role
        return fine_answer_role(reply, m["places"]["initial"], m["places"]["new"])
    if m["genre"] == "multihop":
        text = low.replace(".", "")
        if m["subtype"] == "fullness":
            groups = [("less full", "emptier", "more empty"), ("more full", "fuller"),
                      ("equally full",)]
            names = ["less full", "more full", "equally full"]
        else:
            groups = [("more accessible",), ("less accessible",), ("equally accessible",)]
            names = ["more accessible", "less accessible", "equally accessible"]
        return next((n for n, g in zip(names, groups) if any(p in text for p in g)), None)
    token = low.split("\n\n")[-1].split(":")[-1].split(".")[0].strip()
    if token in ("a", "b", "c"):
        return {"a": "positive", "b": "neutral", "c": "negative"}[token]
    said = [w for w in ("positive", "negative", "neutral") if w in token]
    return said[0] if len(said) == 1 else None


def compare(row, reply):
    said = oracle(row, reply)
    if said is None:
        return "original reads nothing"
    ours = original_record(row, reply, BENCHMARK)["label"]
    if ours == said:
        return "agree"
    if meta(row)["genre"] == "location_coarse" and ours is None:
        return "no inside a word"  # "not", "know": the original reads no, we read nothing
    return f"DISAGREE {said} vs {ours}: {reply[:80]!r}"


def test_untagged_shapes_agree_with_the_original(rows):
    def first(genre, subtype=None):
        return next(r for r in rows if meta(r)["genre"] == genre
                    and (subtype is None or meta(r)["subtype"] == subtype))

    coarse, fine = first("location_coarse"), first("location_fine")
    full, access, attitude = first("multihop", "fullness"), first("multihop", "accessibility"), \
        first("attitude")
    initial, new = meta(fine)["places"]["initial"], meta(fine)["places"]["new"]
    cases = [
        (coarse, "No. He never saw the move, so he thinks it is where he left it.", "no", "agree"),
        (coarse, "Yes, it is still there.", "yes", "agree"),
        (coarse, "Yes, I know it is there.", "yes", "original reads nothing"),  # "know": no
        (coarse, "It is not in its initial location.", None, "no inside a word"),
        (coarse, "I think the answer would be no, given the story.", "no", "agree"),
        (fine, f"The object is in the {new.replace('_', ' ')}. It was moved there after a long "
               f"discussion about where it should be kept, far from where it was before." * 3,
         "new", "agree"),  # long: the shared fallback reads no answer; the original's overlap does
        (fine, f"In the {initial}.", "initial", "agree"),
        (full, "C. less full", "less full", "agree"),
        (full, "B. equally full\n\nThe bottle is less full now.", "less full", "agree"),
        (full, "B", "equally full", "original reads nothing"),  # our prompt letters the options
        (access, "It becomes more accessible.", "more accessible", "agree"),
        (attitude, "A. positive", "positive", "agree"),
        (attitude, "Her attitude: negative. She dislikes it.", "negative", "agree"),
        (attitude, "B. neutral\n\nThe answer is B. neutral", "neutral", "original reads nothing"),
    ]
    for row, reply, label, verdict in cases:
        assert original_record(row, reply, BENCHMARK)["label"] == label, reply
        assert compare(row, reply) == verdict, (reply, compare(row, reply))


@pytest.mark.parametrize("name", ["opentom", "opentom_long"])
def test_real_replies_agree_with_the_original(agrees_with_original, name):
    agrees_with_original(name, compare)


def test_chance_of_each_genre(rows):
    from eval.benchmarks.opentom import chance_of

    assert BENCHMARK.chance is chance_of
    by_genre = {meta(r)["genre"]: r for r in rows}
    assert chance_of(by_genre["location_fine"]) == chance_of(by_genre["location_coarse"]) == 0.5
    assert chance_of(by_genre["multihop"]) == chance_of(by_genre["attitude"]) == pytest.approx(1 / 3)


def test_a_hedge_is_no_answer_in_macro_f1_and_the_original_reads_its_word(rows):
    """Issue 40: "No or maybe." hedges; the original's coarse reader takes the one of yes/no it
    finds among the words. `macro_f1` (the careful reading) gives it no class; the original's
    classes give `macro_f1_original`."""
    coarse = [r for r in rows if r["answer_type"] == "yes_no"]
    no_rows = [r for r in coarse if r["answer"] == "no"]
    assert no_rows
    rec = record_for(no_rows[0], "No or maybe.", BENCHMARK)
    assert not rec["correct"] and rec["label"] is None and rec["flag"] == "hedge"
    orig = original_record(no_rows[0], "No or maybe.", BENCHMARK)
    assert orig["correct"] and orig["label"] == "no"
    metrics = BENCHMARK.metrics(records(coarse, lambda r: "No or maybe."))
    assert metrics["accuracy"] == 0.0
    assert metrics["original"]["accuracy"] == pytest.approx(len(no_rows) / len(coarse))
    assert metrics["macro_f1_original"] > metrics["macro_f1"]
