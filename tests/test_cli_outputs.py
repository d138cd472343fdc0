"""An output never eats its input, a resumed output never mixes two runs, and one process writes
an output at a time (issue 44). The one-line errors themselves are cases of test_cli_errors.py;
these tests check what is left on disk, and that the right runs still resume and start over."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from eval.cli import main as eval_main
from eval.jsonl import hold
from exploretom.cli import main

OFFLINE_LLM = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-O", "api_key_env=''"]
SAMPLE = ["sample", "--action-set", "A1", "--people", "2", "--moves", "2", "--rooms", "1",
          "--max-actions", "8", "-q"]
GRID = {"action_sets": ["A1"], "asymmetric": [False], "people": [2], "moves": [2], "rooms": [1],
        "max_actions": 7}


def run_yaml(path: Path, **fields) -> Path:
    path.write_text(yaml.safe_dump({"stories_per_setting": 2, "grid": GRID,
                                    "search": {"budget": 4, "continuations": 3}, **fields}))
    return path


def ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


def labelled(tmp_path: Path) -> Path:
    out = tmp_path / "s.jsonl"
    assert main([*SAMPLE, "-n", "3", "--label", "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize("command", ["label", "infill"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(command, tmp_path, capsys):
    stories = labelled(tmp_path)
    before = stories.read_bytes()
    extra = OFFLINE_LLM if command == "infill" else []
    assert main([command, str(stories), "-o", str(stories), *extra]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert stories.read_bytes() == before


def test_a_failed_label_leaves_the_earlier_output_whole(tmp_path, capsys):
    stories, out = labelled(tmp_path), tmp_path / "labelled.jsonl"
    assert main(["label", str(stories), "-o", str(out)]) == 0
    before = out.read_bytes()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["label", str(empty), "-o", str(out)]) == 2  # no stories: nothing replaced
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl", "labelled.jsonl",
                                                          "s.jsonl", "s.jsonl.run.json"]


def test_search_resumed_with_another_config_is_refused_until_fresh(tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    world = run_yaml(tmp_path / "a.yaml")
    noisy = run_yaml(tmp_path / "b.yaml", target={"kind": "noisy", "p": 0.5, "q": 0.1})
    wider = run_yaml(tmp_path / "c.yaml", grid={**GRID, "rooms": [1, 2]})
    assert main(["search", "--config", str(world), "-o", str(out), "-q"]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    for other, changed in ((noisy, "target.kind"), (wider, "grid.rooms")):
        assert main(["search", "--config", str(other), "-o", str(out), "-q"]) == 2
        err = capsys.readouterr().err
        assert changed in err and "--fresh" in err and err.count("\n") == 1
        assert out.read_bytes() == before  # nothing appended, nothing cut
    # more stories of the same run extend it; --fresh starts over with the other config
    more = run_yaml(tmp_path / "d.yaml", stories_per_setting=3)
    assert main(["search", "--config", str(more), "-o", str(out), "-q"]) == 0
    assert len(ids(out)) == 3 and out.read_bytes().startswith(before)
    assert main(["search", "--config", str(noisy), "-o", str(out), "-q", "--fresh"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2 and {r["target"] for r in records} == {"noisy:0.5,0.1"}


def test_sample_resumes_a_larger_n_but_refuses_other_arguments(tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    assert main([*SAMPLE, "-n", "3", "-o", str(out)]) == 0
    assert main([*SAMPLE, "-n", "5", "-o", str(out)]) == 0
    assert len(ids(out)) == len(set(ids(out))) == 5
    before = out.read_bytes()
    other = [a if a != "8" else "9" for a in SAMPLE]  # --max-actions 9
    assert main([*other, "-n", "5", "-o", str(out)]) == 2
    assert "max_actions: 8 there, 9 now" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_a_grid_that_can_produce_nothing_writes_nothing(tmp_path):
    cfg = run_yaml(tmp_path / "a.yaml", grid={**GRID, "moves": [2], "max_actions": 1})
    assert main(["search", "--config", str(cfg), "-o", str(tmp_path / "o.jsonl"), "-q"]) == 2
    assert not (tmp_path / "o.jsonl").exists()


def _writers(tmp_path: Path):
    """(command line, path whose lock a running writer holds, output that must be left as it is)."""
    stories = labelled(tmp_path)
    out = tmp_path / "o.jsonl"
    return {
        "search": (["search", "--config", str(run_yaml(tmp_path / "a.yaml")), "-o", str(out), "-q"],
                   out, out),
        "sample": ([*SAMPLE, "-n", "2", "-o", str(out)], out, out),
        "infill": (["infill", str(stories), "-o", str(out), "-q", *OFFLINE_LLM], out, out),
        "contexts": (["contexts", "-n", "1", "--people", "2", "-q", "-o", str(out), *OFFLINE_LLM],
                     out, out),
        "export": (["export", str(stories), "-o", str(tmp_path / "ds")],
                   tmp_path / "ds.lock", tmp_path / "ds"),
    }


@pytest.mark.parametrize("command", ["search", "sample", "infill", "contexts", "export"])
def test_a_second_writer_of_one_output_is_refused_at_once(command, tmp_path, capsys):
    argv, locked, out = _writers(tmp_path)[command]
    with hold(locked):  # as a running command holds it (flock: any other open file conflicts)
        assert main(argv) == 2
        assert "is being written by another process" in capsys.readouterr().err
        assert not out.exists() or out.stat().st_size == 0


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "shared/benchmarks/tomi").is_dir(),
                    reason="needs the shared ToMi sample")
def test_a_second_eval_run_on_one_output_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with hold(out):
        assert eval_main(["run", "tomi", "--model", "m", "--backend", "openai", "--limit", "1",
                          "-o", str(out), "--no-progress"]) == 2
    assert "is being written by another process" in capsys.readouterr().err
    assert list(out.iterdir()) == []


def test_a_search_fingerprint_ignores_where_and_how_fast_a_model_target_is_asked():
    from exploretom.search.run import RunConfig, search_fingerprint

    def fp(**target):
        return search_fingerprint(RunConfig.model_validate(
            {"target": {"kind": "openai", "model": "m", **target}}))

    assert fp(concurrency=64, base_url="http://127.0.0.1:8001/v1") == fp()
    assert fp(model="other") != fp() and fp(max_new_tokens=8) != fp()
