"""ToMBench loader: 20 task files, English fields, seeded option shuffles mapped back to the
original letters, majority vote over permutations, accuracy per task and ability."""
import json
import shutil

import pytest

from eval.benchmarks.base import BenchmarkFormatError, record_for, scripted_records
from eval.benchmarks.tombench import ANSWER_KEY, BENCHMARK, load, split_abilities
from eval.rows import SYSTEM_PROMPT, meta, user_text, validate_row


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path()


@pytest.fixture(scope="module")
def items(sample):
    return {
        (f.stem, n): json.loads(line)
        for f in sorted((sample / "data").glob("*.jsonl"))
        for n, line in enumerate(f.read_text().splitlines(), 1)
        if line.strip()
    }


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows(sample)


def records(rows, answer_of):
    return scripted_records(BENCHMARK, rows, answer_of)


def run(rows, answer_of):
    return BENCHMARK.metrics(records(rows, answer_of))


def answer(letter):
    return f"<think>t</think><answer>{letter}</answer>"


def test_every_item_loads(rows, items):
    assert len(rows) == len(items) == 100
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        validate_row(r)
        assert r["source"] == "tombench" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        m = meta(r)
        item = items[(m["task"], int(r["id"].rsplit("/", 1)[1]))]
        gold = item[ANSWER_KEY].strip()[0]
        # the option shown under the row's gold letter is the item's gold option, in English
        assert r["choices"][ord(r["answer"]) - 65] == item[f"OPTION-{gold}"].removeprefix(f"{gold}. ").strip()
        assert item["STORY"].strip() in user_text(r) and item["QUESTION"].strip() in user_text(r)
        assert not any(c.startswith(("A. ", "B. ")) for c in r["choices"])


def test_two_option_items_keep_two_options(rows):
    two = [r for r in rows if len(r["choices"]) == 2]
    assert len(two) == 5  # NaN options C/D in Faux-pas and Strange Story items
    assert all("(A or B)" in user_text(r) for r in two)


def test_shuffle_is_seeded_and_not_identity(sample, rows):
    again = load(sample)
    assert [r["prompt"] for r in again] == [r["prompt"] for r in rows]
    orders = [meta(r)["shown_as"] for r in rows]
    assert sum(o != sorted(o) for o in orders) > 50
    other_seed = load(sample, seed=1)
    assert [meta(r)["shown_as"] for r in other_seed] != orders


def test_perfect_answerer_scores_100(rows):
    metrics = run(rows, lambda r: answer(r["answer"]))
    assert metrics["accuracy"] == 1.0 and metrics["n"] == 100


@pytest.mark.parametrize("letter", "ABCD")
def test_constant_answerer_scores_share_of_its_letter(rows, letter):
    metrics = run(rows, lambda r: answer(letter))
    assert metrics["accuracy"] == pytest.approx(sum(r["answer"] == letter for r in rows) / len(rows))


def test_letters_are_mapped_back_to_original_options(rows):
    # answer the option that was originally 'A' wherever it is shown
    recs = records(rows, lambda r: answer("ABCD"[meta(r)["shown_as"].index("A")]))
    assert all(rec["original_choice"] == "A" for rec in recs)
    expected = sum(meta(r)["original_answer"] == "A" for r in rows) / len(rows)
    assert BENCHMARK.metrics(recs)["accuracy"] == pytest.approx(expected)


def test_breakdowns_per_task_ability_and_category(rows):
    metrics = run(rows, lambda r: answer(r["answer"]))
    assert len(metrics["by_task"]) == 20 and all(v["n"] == 5 for v in metrics["by_task"].values())
    abilities = metrics["by_ability"]
    # the multi-ability items count under each of their abilities
    assert abilities["Belief: Second-order beliefs"]["n"] == 3
    assert abilities["Belief: Content false beliefs"]["n"] == 3
    assert "Non-Literal Communication: Humor" in abilities  # 'Non-literal communication' made canonical
    assert set(metrics["by_ability_category"]) == {
        "Belief", "Desire", "Emotion", "Intention", "Knowledge", "Non-Literal Communication"}


def test_split_abilities():
    assert split_abilities("Belief: Content false beliefs Belief: Second-order beliefs") == [
        "Belief: Content false beliefs", "Belief: Second-order beliefs"]
    assert split_abilities("Non-literal communication: Humor") == ["Non-Literal Communication: Humor"]
    assert split_abilities("Something else") == ["Something else"]


def test_majority_vote_over_permutations(sample):
    rows5 = load(sample, permutations=5)
    assert len(rows5) == 500 and len({r["id"] for r in rows5}) == 500

    def votes(right_on):
        """Records answering the gold option on the first `right_on` permutations and the same
        wrong original option on the others (answered directly: two permutations of an item
        can show the same order, and a scripted backend would answer them alike)."""
        recs = []
        for r in rows5:
            m = meta(r)
            wrong = next(x for x in sorted(m["shown_as"]) if x != m["original_answer"])
            target = m["original_answer"] if m["permutation"] < right_on else wrong
            recs.append(record_for(r, answer("ABCD"[m["shown_as"].index(target)]), BENCHMARK))
        return BENCHMARK.metrics(recs)

    assert votes(5)["accuracy"] == 1.0
    three = votes(3)
    assert three["accuracy"] == 1.0 and three["accuracy_per_response"] == pytest.approx(0.6)
    two = votes(2)
    assert two["accuracy"] == 0.0 and two["accuracy_per_response"] == pytest.approx(0.4)
    assert two["n"] == 100 and two["n_responses"] == 500


@pytest.fixture
def copy(sample, tmp_path):
    shutil.copytree(sample / "data", tmp_path / "data")
    return tmp_path


def one_line_error(path):
    with pytest.raises(BenchmarkFormatError) as e:
        load(path)
    assert "\n" not in str(e.value)
    return str(e.value)


def edit_line(file, n, change):
    lines = file.read_text().splitlines()
    lines[n - 1] = change(lines[n - 1])
    file.write_text("\n".join(lines) + "\n")


def test_corrupt_line_names_file_and_line(copy):
    file = copy / "data" / "False Belief Task.jsonl"
    edit_line(file, 3, lambda s: s[:40])
    msg = one_line_error(copy)
    assert "False Belief Task.jsonl: line 3: invalid JSON" in msg


def test_missing_option_and_bad_answer(copy):
    file = copy / "data" / "Moral Emotions.jsonl"

    def drop_b(s):
        d = json.loads(s)
        d["OPTION-B"] = None
        return json.dumps(d, ensure_ascii=False)

    edit_line(file, 2, drop_b)
    assert "Moral Emotions.jsonl: line 2" in one_line_error(copy)
    other = copy / "data" / "Hidden Emotions.jsonl"

    def bad_answer(s):
        d = json.loads(s)
        d[ANSWER_KEY] = "E"
        return json.dumps(d, ensure_ascii=False)

    edit_line(other, 4, bad_answer)
    msg = one_line_error(other)  # the file alone: the folder still holds the broken Moral Emotions
    assert "Hidden Emotions.jsonl: line 4" in msg and "not an option letter" in msg


def test_missing_field(copy):
    file = copy / "data" / "Hinting Task Test.jsonl"

    def drop_story(s):
        d = json.loads(s)
        del d["STORY"]
        return json.dumps(d, ensure_ascii=False)

    edit_line(file, 5, drop_story)
    assert "Hinting Task Test.jsonl: line 5: missing field 'STORY'" in one_line_error(file)
