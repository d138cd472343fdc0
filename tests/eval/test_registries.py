"""Adding a benchmark or a backend is adding its module (and its test): a throwaway benchmark and a
throwaway backend, written as modules in a temporary folder that is added to their packages'
folders (`__path__`, eval.registry), are found by the registries the code uses, listed, run and
scored by `python -m eval run` (eval.cli.main) with nothing else to edit."""
from __future__ import annotations

import json
import sys

import pytest

BENCHMARK_MODULE = '''
"""Throwaway: yes/no questions, one a line of a JSONL file ({"id", "question", "answer", "kind"})."""
from eval.benchmarks._common import get, read_jsonl
from eval.benchmarks.base import Benchmark
from eval.rows import make_row


def load(path):
    return [make_row(id=f"throwaway/{get(item, 'id', path, n)}", source="throwaway",
                     user=get(item, "question", path, n), answer=get(item, "answer", path, n),
                     answer_type="yes_no", meta={"kind": get(item, "kind", path, n)})
            for n, item in read_jsonl(path)]


BENCHMARK = Benchmark(name="throwaway", category="ei", load=load, display="Throwaway",
                      breakdowns=("kind",), notes="Yes or no; accuracy per kind.")
'''

BACKEND_MODULE = '''
"""Throwaway: gives the same tagged answer to every prompt."""
from eval.backends.base import Backend, Completion, GenerationConfig


class Throwaway(Backend):
    name = "throwaway"

    def __init__(self, model, answer="yes"):
        self.model, self.answer = model, answer

    def generate(self, prompts, config=GenerationConfig(), *, on_result=None, progress=False):
        out = []
        for i, _ in enumerate(prompts):
            out.append(Completion(texts=[f"<think>t</think><answer>{self.answer}</answer>"] * config.n))
            if on_result:
                on_result(i, out[-1])
        return out


BACKEND = Throwaway
'''

QUESTIONS = [{"id": "1", "question": "Is the sky blue?", "answer": "yes", "kind": "colour"},
             {"id": "2", "question": "Is grass green?", "answer": "yes", "kind": "colour"},
             {"id": "3", "question": "Is snow black?", "answer": "no", "kind": "colour"},
             {"id": "4", "question": "Does Anne know?", "answer": "yes", "kind": "belief"}]


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """The two modules in folders of a temporary package, added to their packages' folders; the
    registries are filled again without them afterwards."""
    import eval.backends as backends
    import eval.backends.kinds as kinds
    import eval.benchmarks as benchmarks

    for folder, text in (("benchmarks", BENCHMARK_MODULE), ("kinds", BACKEND_MODULE)):
        (tmp_path / "extra" / folder).mkdir(parents=True)
        (tmp_path / "extra" / folder / "throwaway.py").write_text(text, encoding="utf-8")
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(tmp_path / "extra" / "benchmarks")])
    monkeypatch.setattr(kinds, "__path__", [*kinds.__path__, str(tmp_path / "extra" / "kinds")])
    benchmarks.discover()
    backends.discover()
    yield
    monkeypatch.undo()
    for module in ("eval.benchmarks.throwaway", "eval.backends.kinds.throwaway"):
        sys.modules.pop(module, None)
    benchmarks.discover()
    backends.discover()


def test_a_throwaway_benchmark_and_backend_are_found_run_and_scored(throwaway, tmp_path, capsys):
    from eval.backends import BACKENDS, backend_class
    from eval.benchmarks import BENCHMARKS, get_benchmark
    from eval.cli import main
    from eval.results import load_results

    assert BENCHMARKS["throwaway"] == "eval.benchmarks.throwaway"
    assert get_benchmark("throwaway").title == "Throwaway"
    ei = [n for n in BENCHMARKS if get_benchmark(n).category == "ei"]
    assert ei[-1] == "throwaway"  # table order: last of its category (default rank)
    assert BACKENDS["throwaway"] == "eval.backends.kinds.throwaway"
    assert backend_class("throwaway").name == "throwaway"
    assert main(["list"]) == 0
    assert "  throwaway " in capsys.readouterr().out

    data = tmp_path / "questions.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    out = tmp_path / "run"
    argv = ["run", "throwaway", "--backend", "throwaway", "--model", "always-yes",
            "--data", f"throwaway={data}", "-o", str(out), "--no-progress"]
    assert main(argv) == 0
    results = load_results(out)
    assert results["backend"] == {"backend": "throwaway", "model": "always-yes"}
    entry = results["benchmarks"]["throwaway"]
    assert (entry["score"], entry["n"], entry["chance"]) == (0.75, 4, 0.5)
    assert entry["metrics"]["by_kind"] == {"belief": {"accuracy": 1.0, "n": 1},
                                           "colour": {"accuracy": 2 / 3, "n": 3}}
    assert "Throwaway" in (out / "report.md").read_text(encoding="utf-8")
    samples = [json.loads(line) for line in (out / "samples" / "throwaway.jsonl").read_text().splitlines()]
    assert [s["correct"] for s in samples] == [True, True, False, True]

    # its options are its constructor's, named as any backend's are
    assert main(argv[:6] + ["-O", 'answer="no"', "--data", f"throwaway={data}", "-o", str(tmp_path / "no"),
                            "--no-progress"]) == 0
    assert load_results(tmp_path / "no")["benchmarks"]["throwaway"]["score"] == 0.25
    capsys.readouterr()
    assert main(argv[:6] + ["-O", "colour=1", "--data", f"throwaway={data}", "-o", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.strip() == ("error: throwaway backend: unknown option 'colour'; "
                                               "accepted: answer")
