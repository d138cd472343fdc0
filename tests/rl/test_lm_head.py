"""rl.lm_head: on CPU, TRL's fused LM head scores only the labelled positions, with the loss and
gradients of scoring every position."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
trl_utils = pytest.importorskip("trl.trainer.utils")


def _loss_and_grads(model, ids, labels):
    model.zero_grad()
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    out.loss.backward()
    return out.loss.detach(), out.log_probs.detach(), [p.grad.clone() for p in model.parameters()]


def test_only_labelled_positions_are_scored_with_the_same_loss_and_gradients(tiny_model_dir,
                                                                             monkeypatch):
    from transformers import AutoModelForCausalLM

    from rl.lm_head import score_labelled_positions_only

    # start from TRL's own choice even when an earlier test (a training run) patched it already;
    # the patch is undone after the test
    unpatched = getattr(trl_utils._use_triton, "__wrapped__", trl_utils._use_triton)
    monkeypatch.setattr(trl_utils, "_use_triton", unpatched)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    trl_utils.add_fused_lm_head(model)
    torch.manual_seed(0)
    ids = torch.randint(5, model.config.vocab_size, (3, 40))
    labels = torch.full_like(ids, -100)
    labels[:, -6:] = ids[:, -6:]  # a completion of six tokens after a prompt
    scored = []
    original = trl_utils._ChunkedLogProbFunction.apply

    def counting(hidden, *args):
        scored.append(hidden.shape[0])
        return original(hidden, *args)

    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", counting)
    every = _loss_and_grads(model, ids, labels)
    assert score_labelled_positions_only() and score_labelled_positions_only()  # idempotent
    labelled = _loss_and_grads(model, ids, labels)
    assert scored == [3 * 39, 3 * 6]  # every shifted position, then the labelled ones alone
    assert torch.allclose(every[0], labelled[0], atol=1e-6)
    assert torch.allclose(every[1], labelled[1], atol=1e-6)
    for a, b in zip(every[2], labelled[2]):
        assert torch.allclose(a, b, atol=1e-6)
