"""Reports and comparisons from results.json, suites, and the CLI's one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.cli import main
from eval.report import build_table, table_markdown, write_report
from eval.results import SCHEMA_VERSION
from eval.suites import SUITES_DIR, Suite, available_suites, load_suite_file, resolve_suite


def fake_results(label: str, scores: dict[str, float], by_order: dict[str, float] | None = None) -> dict:
    benchmarks = {}
    for name, score in scores.items():
        metrics = {"accuracy": score, "n": 100}
        if by_order and name == "hitom":
            metrics["by_order"] = {k: {"accuracy": v, "n": 20} for k, v in by_order.items()}
        benchmarks[name] = {"category": "ei" if name == "socialiqa" else "tom",
                            "primary_metric": "accuracy", "score": score, "metrics": metrics,
                            "n": 100, "n_failed": 0, "format_ok_rate": 0.9}
    return {"schema_version": SCHEMA_VERSION, "label": label, "model": f"/models/{label}",
            "backend": {"backend": "hf", "model": f"/models/{label}"}, "suite": "tom",
            "generation": {"temperature": 0.0}, "git_commit": "0123456789abcdef",
            "started_at": "2026-01-01T00:00:00+00:00", "duration_s": 1.0, "benchmarks": benchmarks}


def save(tmp_path: Path, name: str, results: dict) -> Path:
    path = tmp_path / name / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(results))
    return path


BASE = fake_results("base", {"tomi": 0.5, "hitom": 0.3, "socialiqa": 0.7},
                    {"0": 0.9, "1": 0.5, "2": 0.2, "3": 0.1, "4": 0.05})
TRAINED = fake_results("trained", {"tomi": 0.8, "hitom": 0.45, "socialiqa": 0.7, "bigtom": 0.6},
                       {"0": 0.95, "1": 0.7, "2": 0.4, "3": 0.3, "4": 0.2})


def test_table_orders_categories_and_averages_over_shared_benchmarks():
    table = build_table([BASE, TRAINED])
    assert table.columns == ["tomi", "hitom", "bigtom", "socialiqa", "Avg"]
    assert table.avg_over == ["tomi", "hitom", "socialiqa"]
    assert table.cells[0][-1] == pytest.approx(50.0)
    assert table.cells[1][-1] == pytest.approx((80 + 45 + 70) / 3)
    md = table_markdown(table, deltas=True)
    assert "| Model | ToMi | Hi-ToM | BigToM | SocialIQA | Avg |" in md
    assert "| base | 50.00% | 30.00% | – | 70.00% | 50.00% |" in md
    assert "| trained | 80.00% (+30.00 pp) | 45.00% (+15.00 pp) | 60.00% | 70.00% (+0.00 pp) | 65.00% (+15.00 pp) |" in md


def test_report_files(tmp_path):
    written = write_report([BASE], tmp_path)
    assert set(written) == {"report.md", "report.html", "report_scores.png", "report_hitom_by_order.png"}
    md = (tmp_path / "report.md").read_text()
    assert "| base | 50.00% | 30.00% | 70.00% | 50.00% |" in md
    assert "![Hi-ToM per order](report_hitom_by_order.png)" in md
    assert "### Hi-ToM by order" in md and "| 4 | 5.0% (n=20) |" in md
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "<td>base</td>" in html
    assert (tmp_path / "report_hitom_by_order.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_cli_writes_markdown_and_html(tmp_path, capsys):
    a, b = save(tmp_path, "a", BASE), save(tmp_path, "b", TRAINED)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b.parent), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "80.00% (+30.00 pp)" in printed
    assert "(+30.00 pp)" in (out / "compare.md").read_text()
    html = (out / "compare.html").read_text()
    assert "80.00% (+30.00 pp)" in html and "data:image/png;base64," in html
    assert (out / "compare_hitom_by_order.png").exists()


def test_compare_tells_runs_with_the_same_label_apart(tmp_path, capsys):
    # issue 16 item 10: two checkpoints both labelled "final", and a third run with the same
    # label and model, are three rows with three names
    one = fake_results("final", {"tomi": 0.5})
    two = {**fake_results("final", {"tomi": 0.8}), "model": "/models/grpo/final"}
    a, b, c = save(tmp_path, "a", one), save(tmp_path, "b", two), save(tmp_path, "c", one)
    assert main(["compare", str(a), str(b), str(c)]) == 0
    printed = capsys.readouterr().out
    assert f"| final (/models/final) ({a.parent}) | 50.00% |" in printed
    assert "| final (/models/grpo/final) | 80.00% (+30.00 pp) |" in printed
    assert f"| final (/models/final) ({c.parent}) | 50.00% (+0.00 pp) |" in printed


def test_report_cli_rebuilds_next_to_results(tmp_path, capsys):
    a = save(tmp_path, "a", BASE)
    assert main(["report", str(a)]) == 0
    assert (a.parent / "report.md").exists() and (a.parent / "report.html").exists()


# ------------------------------------------------------------------------------------ suites


def test_shipped_suites_are_valid():
    names = available_suites()
    for required in ("tom", "ei", "iq", "all", "tom-synth-paper", "exploretom-paper"):
        assert required in names
    for name in names:
        assert isinstance(load_suite_file(SUITES_DIR / f"{name}.yaml"), Suite)
    paper = resolve_suite("tom-synth-paper")
    assert [b.name for b in paper.benchmarks] == [
        "tomi", "hitom", "tombench", "simpletom", "tomato", "opentom", "emobench", "socialiqa"]
    assert [b.name for b in resolve_suite("exploretom-paper").benchmarks] == [
        "tomi", "hitom", "bigtom", "opentom", "fantom"]


def test_generation_settings_precedence(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ngeneration: {max_new_tokens: 100, temperature: 0.7}\n"
                    "benchmarks:\n  - tomi\n  - name: hitom\n    generation: {max_new_tokens: 200}\n")
    suite = load_suite_file(path)
    tomi, hitom = suite.benchmarks
    assert suite.generation_for(tomi).max_new_tokens == 100
    assert suite.generation_for(hitom).max_new_tokens == 200
    assert suite.generation_for(hitom).temperature == 0.7
    assert suite.generation_for(hitom, {"max_new_tokens": 8, "temperature": None}).max_new_tokens == 8
    assert [b.name for b in resolve_suite(["tomi,hitom", "bigtom"]).benchmarks] == ["tomi", "hitom", "bigtom"]


def test_suite_data_paths_expand_user_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_ROOT", "/data/benchmarks")
    monkeypatch.setenv("HOME", "/home/ada")
    path = tmp_path / "s.yaml"
    path.write_text("benchmarks:\n  - {name: tomi, data: $BENCH_ROOT/tomi}\n"
                    "  - {name: hitom, data: ~/hitom}\n")
    tomi, hitom = load_suite_file(path).benchmarks
    assert (tomi.data, hitom.data) == ("/data/benchmarks/tomi", "/home/ada/hitom")


# --------------------------------------------------------------------------------- CLI errors


def run_cli(args, capsys):
    code = main(args)
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        ("name: s\nbenchmarks: [tomi, nosuch]\n", ":2: benchmarks.1.name: unknown benchmark 'nosuch'"),
        ("name: s\nbenchmarks:\n  - name: tomi\n    limt: 3\n", ":4: benchmarks.0.limt: unknown field; allowed: name, data"),
        ("name: s\ngeneration: {temperature: -1}\nbenchmarks: [tomi]\n", ":2: generation.temperature"),
        ("name: s\nbenchmarks: []\n", ":2: benchmarks: List should have at least 1 item"),
        ("name: s\nbenchmarks: [tomi\n", "not valid YAML"),
    ],
)
def test_invalid_suite_is_one_line(tmp_path, capsys, yaml_text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml_text)
    code, err = run_cli(["run", str(path), "--model", "m"], capsys)
    assert code == 2 and err.startswith(f"error: {path}") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "tomi,nosuch", "--model", "m"], "unknown benchmark or suite 'nosuch'"),
        (["run", "tomi", "--model", "m", "--data", "tomi=/no/such/file"], "no such file"),
        (["run", "tomi", "--model", "m", "--data", "hitom=/x"], "not in suite"),
        (["run", "tomi", "--model", "m", "--backend", "nope"], "unknown backend 'nope'"),
        (["run", "tomi", "--model", "m", "--temperature", "-2"], "temperature must be >= 0"),
        (["run", "tomi", "--model", "m", "-O", "batch_size"], "KEY=VALUE"),
        (["compare", "/no/such/results.json"], "/no/such/results.json: no such file"),
    ],
)
def test_cli_errors_are_one_line(capsys, args, expected):
    code, err = run_cli(args, capsys)
    assert code == 2, err
    assert err.startswith("error: ") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_corrupt_results_json(tmp_path, capsys):
    bad = tmp_path / "results.json"
    bad.write_text('{"schema_version": 1, "benchmarks": {')
    code, err = run_cli(["compare", str(bad)], capsys)
    assert code == 2 and f"error: {bad}: line 1: not valid JSON" in err
    bad.write_text(json.dumps({"schema_version": 7, "benchmarks": {}}))
    code, err = run_cli(["report", str(bad)], capsys)
    assert code == 2 and "schema_version" in err


def test_bad_benchmark_data_names_file_and_line(tmp_path, capsys):
    broken = tmp_path / "aime.jsonl"
    broken.write_text('{"problem_idx": 1, "problem": "1+1?", "answer": 2}\nnot json\n')
    code, err = run_cli(["run", "aime2025", "--model", "m", "--data", f"aime2025={broken}"], capsys)
    assert code == 2 and f"{broken}: line 2" in err and "Traceback" not in err
