"""The transformers backend on CPU with a tiny random Llama, and a suite run end to end with it."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from eval.backends import BackendError, load_backend  # noqa: E402
from eval.backends.base import GenerationConfig  # noqa: E402
from eval.backends.kinds.hf import HFBackend, _cut_at_stop  # noqa: E402
from eval.cli import main  # noqa: E402

PROMPTS = [
    [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Where is the marble?"}],
    [{"role": "user", "content": "Sally put the marble in the basket and left. Where will she look?"}],
    [{"role": "user", "content": "Does Anne know?"}],
    [{"role": "user", "content": "Option A or option B? " * 4}],
    [{"role": "user", "content": "The crate."}],
]


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    return load_backend("hf", str(tiny_model_dir), batch_size=2, device="cpu", dtype="float32")


def test_greedy_batched_equals_one_by_one(backend, tiny_model_dir):
    seen = []
    config = GenerationConfig(max_new_tokens=12)
    out = backend.generate(PROMPTS, config, on_result=lambda i, c: seen.append(i))
    assert sorted(seen) == list(range(len(PROMPTS)))  # each reported once, in the caller's indices
    assert all(c.ok and len(c.texts) == 1 and c.completion_tokens <= 12 for c in out)
    assert all(c.prompt_tokens > 0 for c in out)
    single = HFBackend(str(tiny_model_dir), batch_size=1, device="cpu", dtype="float32")
    assert [c.texts for c in single.generate(PROMPTS, config)] == [c.texts for c in out]
    assert backend.describe()["dtype"] == "float32" and backend.describe()["device"] == "cpu"


@pytest.mark.parametrize("kind, dtype", [("bf16", "bfloat16"), ("fp32", "float32")])
def test_auto_dtype_on_cpu_follows_the_cpu_kind(tiny_model_dir, monkeypatch, kind, dtype):
    """The default dtype on CPU is eval.cpu_precision's choice (bf16 only on some CPU kinds)."""
    from eval import cpu_precision

    monkeypatch.setattr(cpu_precision, "cpu_precision", lambda: (kind, "test"))
    assert HFBackend(str(tiny_model_dir), device="cpu").describe()["dtype"] == dtype


def test_sampling_n_seed_and_greedy_n(backend):
    config = GenerationConfig(max_new_tokens=10, temperature=1.0, top_p=0.95, n=3, seed=7)
    first = backend.generate(PROMPTS[:2], config)
    assert all(len(c.texts) == 3 for c in first)
    assert [c.texts for c in backend.generate(PROMPTS[:2], config)] == [c.texts for c in first]
    assert len(set(first[1].texts)) > 1  # a random model with temperature 1 varies
    greedy = backend.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=6, n=2))
    assert greedy[0].texts[0] == greedy[0].texts[1]


def test_top_k_one_samples_the_greedy_text(backend):
    greedy = backend.generate(PROMPTS[:2], GenerationConfig(max_new_tokens=10))
    top1 = backend.generate(PROMPTS[:2], GenerationConfig(max_new_tokens=10, temperature=1.0, top_k=1))
    assert [c.text for c in top1] == [c.text for c in greedy]


def test_stop_strings_cut_the_text(backend):
    # sampled with a fixed seed: a random model's greedy text is often one token repeated
    config = GenerationConfig(max_new_tokens=24, temperature=1.0, seed=3)
    plain = backend.generate(PROMPTS[1:2], config)[0].text
    assert len(plain) >= 8, plain
    stop = plain[len(plain) // 2 : len(plain) // 2 + 3]
    cut = backend.generate(PROMPTS[1:2], GenerationConfig(**{**config.as_dict(), "stop": (stop,)}))[0].text
    assert stop not in cut and plain.startswith(cut) and len(cut) < len(plain)
    assert _cut_at_stop("think</answer>more", ["</answer>", "zz"]) == "think"


def test_wraps_a_model_already_in_memory(backend):
    config = GenerationConfig(max_new_tokens=6)
    wrapped = HFBackend.from_objects(backend.hf_model, backend.tokenizer, name="policy")
    assert [c.texts for c in wrapped.generate(PROMPTS[:2], config)] == [
        c.texts for c in backend.generate(PROMPTS[:2], config)]
    assert wrapped.describe()["model"] == "policy"


def test_too_long_prompt_is_an_error_not_a_crash(tiny_model_dir):
    small = HFBackend(str(tiny_model_dir), device="cpu", max_input_tokens=64)
    out = small.generate([PROMPTS[0], [{"role": "user", "content": "word " * 200}]],
                         GenerationConfig(max_new_tokens=8))
    assert out[0].ok and not out[1].ok and "context" in out[1].error


def test_bad_model_path_is_one_line(tmp_path):
    with pytest.raises(BackendError, match="cannot load model"):
        HFBackend(str(tmp_path / "nothing-here"))


def test_suite_end_to_end_with_the_tiny_model(tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "tomi,hitom", "--model", str(tiny_model_dir), "--backend", "hf", "--limit", "3",
            "--max-new-tokens", "8", "-O", "batch_size=3", "-o", str(out), "--no-progress",
            "--label", "tiny"]
    assert main(args) == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["benchmarks"]) == {"tomi", "hitom"}
    for entry in results["benchmarks"].values():
        assert entry["n"] == 3 and entry["n_failed"] == 0 and 0 <= entry["score"] <= 1
        assert entry["generation"]["max_new_tokens"] == 8
    assert results["backend"]["backend"] == "hf" and results["backend"]["batch_size"] == 3
    lines = (out / "samples" / "hitom.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(l)["completion_tokens"] <= 8 for l in lines)
    assert "| tiny |" in (out / "report.md").read_text()
    assert "| Model | ToMi | Hi-ToM | Avg |" in capsys.readouterr().out
    assert main(args) == 0  # a second run is answered from the cache
    assert "generating" not in capsys.readouterr().err


# ------------------------------------------------------------------ the other local backend


def test_vllm_backend_without_vllm_is_one_line(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "vllm", None)  # as on a machine without the extra
    with pytest.raises(BackendError, match="install the `vllm` extra") as e:
        load_backend("vllm", "some/model")
    assert "\n" not in str(e.value)
    with pytest.raises(BackendError, match="unknown backend 'vlm'; choose one of: anthropic, hf, openai, served, vllm"):
        load_backend("vlm", "some/model")


def test_vllm_backend_maps_settings_and_reports_per_chunk(monkeypatch):
    """vLLM's API stood in by a fake module: our settings reach SamplingParams, conversations
    reach LLM.chat in chunks, and every answer is reported in the caller's indices."""
    import sys
    import types

    calls = []

    class SamplingParams:
        def __init__(self, **kw):
            self.kw = kw

    class LLM:
        def __init__(self, **kw):
            self.kw = kw

        def chat(self, messages, params, use_tqdm=False, chat_template=None):
            calls.append((len(messages), params.kw))
            out = types.SimpleNamespace
            return [out(prompt_token_ids=[1, 2, 3],
                        outputs=[out(text=f"{conv[-1]['content']}#{k}", token_ids=[7, 8],
                                            finish_reason="length" if k else "stop")
                                 for k in range(params.kw["n"])]) for conv in messages]

    fake = types.ModuleType("vllm")
    fake.LLM, fake.SamplingParams, fake.__version__ = LLM, SamplingParams, "0.33.0"
    monkeypatch.setitem(sys.modules, "vllm", fake)
    backend = load_backend("vllm", "org/model", chunk_size=2, tensor_parallel_size=2)
    assert backend.llm.kw["tensor_parallel_size"] == 2 and backend.llm.kw["model"] == "org/model"
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(5)]
    seen = []
    config = GenerationConfig(max_new_tokens=9, temperature=0.7, top_p=0.9, n=2, seed=5, stop=("</answer>",))
    out = backend.generate(prompts, config, on_result=lambda i, c: seen.append(i))
    assert seen == [0, 1, 2, 3, 4] and [n for n, _ in calls] == [2, 2, 1]
    assert calls[0][1] == {"n": 2, "temperature": 0.7, "top_p": 0.9, "top_k": -1, "max_tokens": 9,
                           "stop": ["</answer>"], "seed": 5}
    assert out[3].texts == ["q3#0", "q3#1"] and out[3].completion_tokens == 4
    assert out[3].finish_reasons == ["stop", "length"] and out[3].truncated(1)
    greedy = backend.sampling_params(GenerationConfig()).kw
    assert greedy["temperature"] == 0.0 and greedy["seed"] is None and greedy["stop"] is None
    assert backend.sampling_params(GenerationConfig(temperature=1.0, top_k=5)).kw["top_k"] == 5
    assert backend.sampling_params(GenerationConfig(top_k=5)).kw["top_k"] == -1  # greedy
    assert backend.describe()["vllm"] == "0.33.0"
