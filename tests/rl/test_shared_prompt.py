"""The shared-prompt GRPO step (rl.shared_prompt) computes what TRL's step computes.

Each test builds the same trainer twice from the same weights, one with `grpo.shared_prompt` off
(TRL's own `_get_per_token_logps_and_entropies` and generation) and one with it on, and compares
log-probabilities and entropies (1e-5 absolute, fp32), the loss and every parameter's gradient
(1e-4 relative) on one scored batch: left-padded prompts of three lengths, completions cut at
different lengths (right padding), with the old log-probabilities (num_iterations 2), the
reference model (beta > 0), LoRA, gradient checkpointing and bf16 autocast; and that each group's
completions read one copy of its prompt's cache (rl.prefix_attention) where the rows allow it.
"""
from __future__ import annotations

import contextlib
import json
import logging
import re

import pytest
import torch

pytestmark = pytest.mark.slow

G = 4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rl.tiny_model import build_tiny_model

    corpus = ["Sally puts the marble in the box. Anne moves it. Where will Sally look? "
              "<think>she saw</think><answer>box</answer>"] * 40
    return build_tiny_model(corpus, tmp_path_factory.mktemp("tiny"), vocab_size=300, hidden_size=64,
                            num_layers=2, num_heads=2, num_kv_heads=1, seed=0)


def _rows(n: int = 6) -> list[dict]:
    # prompts of three lengths, so the batch's prompts are left-padded to the longest
    return [{"prompt": [{"role": "user", "content": "Sally puts the marble in the box. " * (1 + i % 3)
                         + f"Where is it? ({i})"}]} for i in range(n)]


def _reward(prompts, completions, **kwargs):
    return [float(len(str(c)) % 3) for c in completions]


def _trainer(model, tmp_path, shared: str, **overrides):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    lora = overrides.pop("lora", False)
    settings = dict(output_dir=str(tmp_path / shared), use_cpu=True, bf16=False, max_steps=2, learning_rate=1e-3,
                    per_device_train_batch_size=3 * G, num_generations=G, max_completion_length=8,
                    logging_steps=1, report_to="none", save_strategy="no", beta=0.0, seed=0,
                    **_checkpointing_arg(overrides.pop("checkpointing", False)))
    settings.update(overrides)
    peft = None
    if lora:
        from peft import LoraConfig

        peft = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
    torch.manual_seed(0)
    trainer = trainer_class(GRPOTrainer)(model=str(model), reward_funcs=[_reward], args=GRPOConfig(**settings),
                                         train_dataset=Dataset.from_list(_rows()), peft_config=peft,
                                         shared_prompt=shared)
    trainer.current_gradient_accumulation_steps = settings.get("gradient_accumulation_steps", 1)
    trainer.model.train()
    return trainer


def _pair(model, tmp_path, **overrides):
    trl_own = _trainer(model, tmp_path, "off", **dict(overrides))
    shared = _trainer(model, tmp_path, "on", **dict(overrides))
    shared.model.load_state_dict(trl_own.model.state_dict())
    assert shared._sharing and not trl_own._sharing
    return trl_own, shared


def _scored_batch(trainer, cut: bool = True):
    """A scored batch of three prompts x G, its completions cut at different lengths as EOS would."""
    batch = [dict(r) for r in _rows()[:3] for _ in range(G)]
    torch.manual_seed(1)
    inputs = trainer._generate_and_score_completions(batch)
    if not cut:
        return inputs
    mask, ids = inputs["completion_mask"], inputs["completion_ids"]
    for row in range(len(mask)):
        keep = 2 + row % (mask.size(1) - 1)
        mask[row, keep:] = 0
        ids[row, keep:] = trainer.processing_class.pad_token_id
    return inputs


def _loss_and_grads(trainer, inputs):
    trainer.model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(trainer.model, dict(inputs))
    loss.backward()
    return loss.detach(), {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}


@contextlib.contextmanager
def _prompt_cache_read_once_per_group():
    """Counts the layer passes in which the completions read their group's one copy of the prompt's
    cache (rl.prefix_attention) and asserts there were some."""
    from rl import prefix_attention

    calls = []
    update = prefix_attention.SharedPrefixLayer.update

    def counting(self, *args, **kwargs):
        calls.append(self.group)
        return update(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prefix_attention.SharedPrefixLayer, "update", counting)
        yield calls
    assert calls and set(calls) == {G}


def _assert_same_step(trl_own, shared, inputs, rel=1e-4, logp_abs=1e-5, entropy_abs=1e-5):
    from rl.bench_step import grad_rel_diff

    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    keep = inputs["completion_ids"].size(1)
    with torch.no_grad(), _prompt_cache_read_once_per_group():
        want = trl_own._get_per_token_logps_and_entropies(trl_own.model, ids, mask, keep, compute_entropy=True)
        got = shared._get_per_token_logps_and_entropies(shared.model, ids, mask, keep, compute_entropy=True)
    real = inputs["completion_mask"].bool()
    assert (got[0] - want[0])[real].abs().max().item() <= logp_abs
    assert (got[1] - want[1])[real].abs().max().item() <= entropy_abs
    loss_want, grads_want = _loss_and_grads(trl_own, inputs)
    with _prompt_cache_read_once_per_group():
        loss_got, grads_got = _loss_and_grads(shared, inputs)
    assert grads_want and grads_got.keys() == grads_want.keys()
    assert abs(loss_got.item() - loss_want.item()) <= rel * max(1.0, abs(loss_want.item()))
    assert grad_rel_diff(grads_want, grads_got) <= rel
    assert any(g.abs().sum() > 0 for g in grads_want.values())  # there was a gradient to compare


def test_unique_prompts_finds_each_prompt_and_its_rows():
    from rl.shared_prompt import unique_prompts

    ids = torch.tensor([[0, 5, 6], [7, 8, 9], [0, 5, 6], [7, 8, 9], [0, 5, 6]])
    mask = torch.tensor([[0, 1, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1], [1, 1, 1]])  # the last: 0 is a token
    first, rows = unique_prompts(ids, mask)
    assert len(first) == 3
    assert torch.equal(ids[first][rows], ids) and torch.equal(mask[first][rows], mask)
    assert rows[0] == rows[2] != rows[4]


def test_a_group_is_spread_by_a_view_with_the_gathers_gradient():
    from rl.shared_prompt import _spread

    for rows in (torch.tensor([0, 0, 0, 1, 1, 1]), torch.tensor([1, 0, 0, 1, 1, 0])):  # grouped, shuffled
        x = torch.randn(2, 3, 5, requires_grad=True)
        y = torch.randn(2, 3, 5, requires_grad=True)
        weights = torch.randn(6, 3, 5)
        (_spread(x, rows) * weights).sum().backward()
        (y.index_select(0, rows) * weights).sum().backward()
        assert torch.equal(_spread(x, rows), x.index_select(0, rows))
        assert torch.allclose(x.grad, y.grad, atol=1e-6)


@pytest.mark.parametrize("q_len", [1, 5])
def test_attention_over_one_prompt_cache_per_group_is_attention_over_each_rows_copy(q_len):
    """rl.prefix_attention against transformers' sdpa over each row's whole cache: 3 prompts x 4
    rows, 6 query heads on 2 key/value heads, prompts left-padded to 7 positions, a causal mask
    over the rows' own tokens; outputs and the gradients of queries, keys and values."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from rl import prefix_attention

    torch.manual_seed(0)
    units, group, heads, kv_heads, prefix, own, dim = 3, 4, 6, 2, 7, q_len + 3, 8
    rows = units * group
    module = torch.nn.Module()
    module.num_key_value_groups, module.is_causal, module.training = heads // kv_heads, True, False
    query = torch.randn(rows, heads, q_len, dim, requires_grad=True)
    keys_p, values_p = (torch.randn(units, kv_heads, prefix, dim, requires_grad=True) for _ in range(2))
    keys_o, values_o = (torch.randn(rows, kv_heads, own, dim, requires_grad=True) for _ in range(2))
    padding = torch.tensor([0, 2, 5]).repeat_interleave(group)  # left padding of each prompt
    positions = torch.arange(prefix + own)
    mask = (positions >= padding[:, None])[:, None, None, :].expand(rows, 1, q_len, prefix + own).clone()
    mask[..., prefix:] &= torch.arange(own)[None, :] <= torch.arange(own - q_len, own)[:, None]  # causal
    spread = [t.repeat_interleave(group, 0) for t in (keys_p, values_p)]
    want, _ = sdpa_attention_forward(module, query, torch.cat([spread[0], keys_o], 2),
                                     torch.cat([spread[1], values_o], 2), mask, scaling=dim ** -0.5)
    layer = prefix_attention.SharedPrefixLayer(keys_p, values_p, group)
    k, v = layer.update(keys_o, values_o)
    got, _ = prefix_attention._attention(module, query, k, v, mask, scaling=dim ** -0.5)
    assert layer.get_seq_length() == prefix + own
    assert (got - want).abs().max().item() < 1e-5
    weights = torch.randn_like(want)
    inputs = (query, keys_p, values_p, keys_o, values_o)
    grads_want = torch.autograd.grad((want * weights).sum(), inputs)
    grads_got = torch.autograd.grad((got * weights).sum(), inputs)
    for g_got, g_want in zip(grads_got, grads_want):
        assert (g_got - g_want).abs().max().item() < 1e-5


def test_a_completion_cache_grows_by_doubling_and_keeps_every_token():
    from rl import prefix_attention

    prefix = torch.randn(2, 1, 3, 4)
    layer = prefix_attention.SharedPrefixLayer(prefix, prefix, group=2)
    steps = [torch.randn(4, 1, 1, 4) for _ in range(40)]
    for step in steps:
        keys, values = layer.update(step, step)
    assert torch.equal(keys, torch.cat(steps, 2)) and layer.get_seq_length() == 43
    assert layer._keys.size(2) == 64  # 16, 32, 64: three allocations for 40 tokens


@pytest.mark.parametrize("setting", [
    {},
    {"beta": 0.04, "num_iterations": 2},  # reference model and old log-probabilities
    {"checkpointing": True},
    {"lora": True, "beta": 0.04},  # the reference is the model with its adapter off
], ids=["plain", "ref-and-old", "checkpointing", "lora"])
def test_log_probabilities_loss_and_gradients_equal_trls(tiny, tmp_path, setting):
    trl_own, shared = _pair(tiny, tmp_path, **setting)
    for name in ("old_per_token_logps", "ref_per_token_logps"):
        if name == "old_per_token_logps" and not setting.get("num_iterations") or \
                name == "ref_per_token_logps" and not setting.get("beta"):
            continue
        want, got = _scored_batch(trl_own, cut=False), _scored_batch(shared, cut=False)
        assert torch.equal(got["completion_ids"], want["completion_ids"])
        real = want["completion_mask"].bool()
        assert (got[name] - want[name])[real].abs().max().item() <= 1e-5  # scored in the shared passes too
    _assert_same_step(trl_own, shared, _scored_batch(trl_own))


def test_bf16_autocast_stays_within_bf16s_rounding(tiny, tmp_path):
    trl_own, shared = _pair(tiny, tmp_path, bf16=True)
    inputs = _scored_batch(trl_own)
    _assert_same_step(trl_own, shared, inputs, rel=5e-2, logp_abs=5e-2, entropy_abs=5e-2)


def test_generation_prefills_once_and_samples_what_trl_samples(tiny, tmp_path):
    trl_own, shared = _pair(tiny, tmp_path)
    tok = trl_own.processing_class
    prompts = [tok(tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=False))["input_ids"]
               for r in _rows()[:3] for _ in range(G)]
    calls = []
    original = shared.model.forward

    def counting(*args, **kwargs):
        ids = kwargs.get("input_ids")
        calls.append(None if ids is None else tuple(ids.shape))
        return original(*args, **kwargs)

    shared.model.forward = counting
    torch.manual_seed(5)
    want, _ = trl_own._generate_single_turn(prompts, None, {}, G)
    torch.manual_seed(5)
    with _prompt_cache_read_once_per_group():
        got, _ = shared._generate_single_turn(prompts, None, {}, G)
    assert got == want
    assert calls[0][0] == 3  # the prefill: three distinct prompts, not twelve rows
    assert all(shape[0] == 3 * G and shape[1] == 1 for shape in calls[1:])  # then one token a row


def test_whole_runs_end_with_the_same_weights(tiny, tmp_path):
    """Two optimizer steps of two micro-steps each through Trainer.train(), with dynamic sampling."""
    ends = {}
    for mode in ("off", "auto"):
        # SGD: Adam would turn gradient noise of 1e-7 on near-zero entries into whole steps of lr
        trainer = _trainer(tiny, tmp_path / mode, mode, per_device_train_batch_size=G, gradient_accumulation_steps=2,
                           max_steps=2, optim="sgd", learning_rate=1e-2)
        trainer.dynamic_sampling = True
        before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
        trainer.train()
        ends[mode] = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
        assert any(not torch.equal(before[n], p) for n, p in ends[mode].items())  # it trained
    for name, want in ends["off"].items():
        assert torch.allclose(ends["auto"][name], want, rtol=1e-4, atol=1e-6), name


def test_auto_says_once_when_it_cannot_apply_and_on_refuses(tiny, tmp_path, monkeypatch, capsys):
    from rl import shared_prompt
    from rl.config import ConfigError

    monkeypatch.setattr(shared_prompt, "sharding_reason", lambda trainer: "DeepSpeed ZeRO-3 gathers sharded weights")
    trainer = _trainer(tiny, tmp_path, "auto")
    assert not trainer._sharing
    err = capsys.readouterr().err
    assert err.count("grpo.shared_prompt") == 1 and "TRL's own step runs" in err and "ZeRO-3" in err
    with pytest.raises(ConfigError, match="grpo.shared_prompt: on, but it cannot apply: DeepSpeed ZeRO-3"):
        _trainer(tiny, tmp_path, "on")


@pytest.fixture
def one_thread():
    """Matrix products split their sums by thread, differently for the two steps' shapes: with two
    threads SmolLM2's log-probabilities differed by 1.43e-5 (fp32 rounding in other orders), with
    one (as `make test` runs every worker) within the 1e-5 the comparison asks."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_the_real_model_steps_the_same(smollm2, tmp_path, one_thread):
    """SmolLM2-135M-Instruct, fp32: a whole step's loss and gradients."""
    trl_own, shared = _pair(smollm2, tmp_path, max_completion_length=6)
    inputs = _scored_batch(trl_own)
    # An entropy is log-sum-exp minus the mean logit, a difference of terms of the logits' size:
    # SmolLM2's entropies differed from TRL's by at most 1.53e-5 (2**-16), its log-probabilities
    # by under 1e-5
    _assert_same_step(trl_own, shared, inputs, entropy_abs=2e-5)


def test_the_real_model_generates_what_plain_generate_does_from_left_padded_prompts(smollm2):
    """Prompts of three lengths, left-padded: each row's next-token logits at every step equal plain
    `generate`'s. The prefill must place each row's prompt where `generate` places it (counting
    from its first real token); at the padded column's positions SmolLM2 wrote 19% well-formed
    completions against 100% (the tiny model above, trained on one sentence, hardly reads
    positions, so its sampled tokens had agreed)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rl.shared_prompt import prefill_once

    tok = AutoTokenizer.from_pretrained(str(smollm2))
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(smollm2), dtype=torch.float32).eval()
    texts = [tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=False) for r in _rows(3)]
    batch = tok([t for t in texts for _ in range(2)], return_tensors="pt", padding=True, add_special_tokens=False)
    assert len(set(batch.attention_mask.sum(1).tolist())) == 3
    outs = []
    for generate in (model.generate, prefill_once(model.generate, model)):
        with torch.no_grad():
            outs.append(generate(input_ids=batch.input_ids, attention_mask=batch.attention_mask, do_sample=False,
                                 max_new_tokens=6, output_logits=True, return_dict_in_generate=True,
                                 pad_token_id=tok.pad_token_id))
    want, got = outs
    assert torch.equal(got.sequences, want.sequences)
    for g, w in zip(got.logits, want.logits, strict=True):
        torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)


def test_the_benchmark_prints_both_steps_and_the_differences(tiny, tmp_path, toy_data, capsys):
    import yaml
    from transformers import AutoTokenizer

    from rl.bench_step import cli

    cfg = {"model": {"path": str(tiny), "dtype": "float32"},
           "data": {"train": [{"path": str(toy_data["location"])}]},
           "train": {"output_dir": str(tmp_path / "out"), "learning_rate": 1e-4, "per_device_train_batch_size": 8,
                     "device": "cpu", "precision": "fp32"},
           "log": {"report_to": []},
           "grpo": {"num_generations": 4, "max_completion_length": 8, "beta": 0.0}}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    # Only prompts of at least the median length are drawn (the figure's stated prompt length)
    tok = AutoTokenizer.from_pretrained(str(tiny))
    rows = [json.loads(line) for line in toy_data["location"].read_text().splitlines()]
    lengths = sorted(len(tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True,
                                                 return_dict=True)["input_ids"]) for r in rows)
    median = lengths[len(lengths) // 2]
    # TRL's step in slices of 4 rows, the shared one whole: the same gradient either way
    assert cli([str(path), "--steps", "2", "--generations", "4", "--prompts", "2", "--micro-batch", "4",
                "--shared-micro-batch", "8", "--min-prompt-tokens", str(median)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert f"{sum(n >= median for n in lengths)} of {len(rows)} training prompts have at least {median} tokens" in out
    drawn = [float(re.search(r"prompts of (\d+) tokens", line).group(1)) for line in out if line.startswith("step ")]
    assert len(drawn) == 2 and min(drawn) >= median > lengths[0]
    assert any(line.strip().startswith("TRL's step:") for line in out)
    assert any(line.strip().startswith("shared-prompt step:") for line in out)
    fields = dict(part.split("=") for part in out[-1].split())
    assert set(fields) == {"step_speedup", "loss_abs_diff", "grad_rel_diff"}
    assert float(fields["grad_rel_diff"]) <= 1e-4 and float(fields["loss_abs_diff"]) <= 1e-5
    assert float(fields["step_speedup"]) > 0
