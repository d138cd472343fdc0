"""The loaders' shared helpers (eval/benchmarks/_common.py): the error contract, reading JSON Lines,
option lines, the mean, and the two seeded option orders."""
import re

import pytest

from eval.benchmarks._common import (
    fail,
    option_lines,
    permutation_sha256,
    permutation_str_seed,
    read_json,
    read_jsonl,
)
from eval.benchmarks.base import BenchmarkFormatError, mean


# Option orders, pinned. Each fixes which letter is gold in its benchmarks' prompts (sha256: GPQA
# Diamond; string seed: BigToM, FANToM, ToMBench), so a change to either moves their scores and
# their published figures: these values were taken from the code that produced those figures.
def test_each_option_order_is_pinned():
    assert [permutation_sha256(4, 0, f"k{i}") for i in range(4)] == [
        [1, 0, 2, 3], [0, 2, 3, 1], [3, 1, 2, 0], [0, 2, 1, 3]]
    assert [permutation_str_seed(4, f"k{i}", 0) for i in range(4)] == [
        [2, 1, 0, 3], [3, 0, 2, 1], [1, 0, 2, 3], [2, 3, 1, 0]]
    assert permutation_sha256(4, "gpqa_diamond", 0, "rec1") == [3, 1, 2, 0]
    assert permutation_str_seed(2, "x", 0) == [1, 0]


def test_the_two_orders_differ_on_the_same_seed_text():
    # both hash the text '0:k<i>', by different rules: one cannot stand in for the other
    differ = sum(permutation_sha256(4, 0, f"k{i}") != permutation_str_seed(4, f"k{i}", 0)
                 for i in range(100))
    assert differ > 80


@pytest.mark.parametrize("where, text", [
    (3, "f.jsonl: line 3: field 'x': missing"),
    ("record 2", "f.jsonl: record 2: field 'x': missing"),
    ("", "f.jsonl: field 'x': missing"),
    (None, "f.jsonl: field 'x': missing"),
])
def test_fail_raises_one_line_naming_the_place(where, text):
    with pytest.raises(BenchmarkFormatError) as e:
        fail("f.jsonl", where, "field 'x':\n  missing")
    assert str(e.value) == text


def test_fail_hides_the_caught_error():
    with pytest.raises(BenchmarkFormatError) as e:
        try:
            int("x")
        except ValueError:
            fail("f", 1, "not an integer")
    assert e.value.__suppress_context__  # the message says it; no second traceback


def test_read_jsonl_numbers_lines_and_names_bad_ones(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"a": 1}\n\n{"b": 2}\n')
    assert list(read_jsonl(f)) == [(1, {"a": 1}), (3, {"b": 2})]
    f.write_text('{"a": 1}\n[1, 2]\n')
    not_object = re.escape(f"{f}: line 2: expected a JSON object, got list")
    with pytest.raises(BenchmarkFormatError, match=f"^{not_object}$"):
        list(read_jsonl(f))
    f.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 2: not valid JSON")):
        list(read_jsonl(f))
    f.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 1: not UTF-8 text")):
        list(read_jsonl(f))
    none = tmp_path / "none.jsonl"
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{none}: no such file") + "$"):
        list(read_jsonl(none))


def test_read_json_names_the_line(tmp_path):
    f = tmp_path / "a.json"
    f.write_text('[\n  {"a": 1},\n  {"a": }\n]\n')
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 3: not valid JSON")):
        read_json(f)


def test_option_lines_show_the_texts_as_given():
    assert option_lines(["red", " blue "]) == "A. red\nB.  blue "
    with pytest.raises(ValueError, match="at most 26 options, got 27"):
        option_lines(["x"] * 27)


def test_mean():
    assert mean([True, False, True, True]) == 0.75
    assert mean([]) == 0.0 and mean([], empty=None) is None
