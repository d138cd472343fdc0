"""eval.jsonl: the one reader and appender of JSON Lines files."""
import os

import pytest

from eval.jsonl import Appender, InputError, LogBusy, complete_records, numbered_records


def test_numbered_records_name_the_file_and_line_of_a_bad_one(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"a": 1}\n\n{"b": 2}\n')
    assert list(numbered_records(f)) == [(1, {"a": 1}), (3, {"b": 2})]
    for text, error in (('{"a": 1}\n[1, 2]\n', "line 2: expected a JSON object, got list"),
                        ('{"a": 1}\n{"a": }\n', "line 2: not valid JSON (Expecting value, column 7)")):
        f.write_text(text)
        with pytest.raises(InputError) as e:
            list(numbered_records(f))
        assert str(e.value) == f"{f}: {error}"
    f.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputError, match="line 2: not UTF-8 text"):
        list(numbered_records(f))
    with pytest.raises(InputError, match="no such file"):
        list(numbered_records(tmp_path / "none.jsonl"))


def test_skip_torn_passes_over_a_cut_line_but_not_a_wrong_one(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text('{"a": 1}\n{"a": 2, "b\n{"a": 3}\n{"a": 4')
    assert [o["a"] for _, o in numbered_records(f, skip_torn=True)] == [1, 3]
    f.write_text('{"a": 1}\n"text"\n')
    with pytest.raises(InputError, match="expected a JSON object"):
        list(numbered_records(f, skip_torn=True))
    assert list(complete_records(tmp_path / "not-yet.jsonl")) == []


def test_skip_torn_passes_over_a_line_cut_within_a_character_and_says_which(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_bytes(b'{"a": 1}\n{"a": 2, "b\n{"a": 3}\n' + '{"a": 4, "t": "é'.encode()[:-1])
    torn = []
    assert [o["a"] for _, o in numbered_records(f, skip_torn=True, on_torn=torn.append)] == [1, 3]
    assert torn == [2, 4]
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        list(numbered_records(f))


def test_exclusive_appender_survives_a_torn_tail_and_refuses_a_second_writer(tmp_path):
    path = tmp_path / "log.jsonl"
    with Appender(path, exclusive=True) as log:
        log.write({"i": 1})
        log.write({"i": 2, "text": "é\n"})
        with pytest.raises(LogBusy):
            Appender(path, exclusive=True)
    with path.open("ab") as f:
        f.write(b'{"i": 3, "text": "half a rec')  # what kill -9 in mid-write would leave
    assert [r["i"] for r in complete_records(path)] == [1, 2]
    with Appender(path, exclusive=True) as log:  # cuts the torn tail before appending
        log.write({"i": 4})
    assert [r["i"] for r in complete_records(path)] == [1, 2, 4]
    assert path.read_bytes().endswith(b'{"i": 4}\n')
    # a log that is one torn line only
    other = tmp_path / "torn.jsonl"
    other.write_bytes(b'{"a"')
    Appender(other, exclusive=True).close()
    assert other.read_bytes() == b"" and not list(complete_records(other))
    assert os.path.getsize(path) > 0


def test_resume_and_the_appender_cut_the_same_torn_tail(tmp_path):
    """A partial last line longer than the block the tail is searched in (64 KiB), and a file
    that is one partial line: `resume` returns the whole records' ids and cuts the rest, as the
    appender's `cut_torn_tail` does; a tail that is no record of this tool is refused, not cut."""
    from eval.jsonl import cut_torn_tail, resume

    whole = b'{"id": 1}\n{"id": 2}\n'
    torn = b'{"id": 3, "text": "' + b"x" * 100_000
    for cut in (resume, cut_torn_tail):
        path = tmp_path / f"{cut.__name__}.jsonl"
        path.write_bytes(whole + torn)
        got = cut(path)
        assert path.read_bytes() == whole
        assert got == ({1, 2} if cut is resume else None)
        path.write_bytes(torn)
        cut(path)
        assert path.read_bytes() == b""
    path.write_bytes(whole + b"not json")
    with pytest.raises(InputError, match="its last line is not a record of this tool"):
        resume(path)
    assert path.read_bytes() == whole + b"not json"
