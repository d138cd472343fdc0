"""A GRPO step on the tiny model whose completions include hedges and negations (issue 40).

The completions are scripted through TRL's `rollout_func` hook (the tiny model's own samples are
noise), so every group holds the gold answer, a hedge between two answers, a negated gold and an
untagged hedge: the reward a run uses (`rl.rewards`, with untagged answers read as evaluation
reads them, the reading most exposed to a hedge) pays the gold alone, and the step logs the share
of completions read as hedges or negations (`reading/hedge_or_negation`) as `rl.train` does."""
from __future__ import annotations

import json

import pytest

from rl.rewards import format_reward, untagged_outcome_reward

pytestmark = pytest.mark.slow

GOLD = "<think>Sally was away when Anne moved it.</think><answer>box</answer>"
SHAPES = [
    (GOLD, 1.0, False),
    ("<think>Either could be.</think><answer>box or basket</answer>", 0.0, True),
    ("<think>She did not see it.</think><answer>not in the box</answer>", 0.0, True),
    ("Either the box or the basket.", 0.0, True),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rl.tiny_model import build_tiny_model

    corpus = [f"Sally puts the marble in the box. Where will she look? {text}" for text, _, _ in SHAPES] * 10
    return build_tiny_model(corpus, tmp_path_factory.mktemp("tiny"), vocab_size=300, hidden_size=64,
                            num_layers=2, num_heads=2, num_kv_heads=1, seed=0)


def test_a_grpo_step_pays_no_hedge_and_logs_their_share(tiny, tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    rows = [{"prompt": [{"role": "user", "content": f"Story {i}: Sally put the marble in the box and "
                                                    "left; Anne moved it to the basket. Question: "
                                                    "Where will Sally look for the marble?"}],
             "answer": "box", "answer_type": "short", "choices": [], "source": "toy",
             "meta": json.dumps({"candidates": ["box", "basket"], "order": 1})} for i in range(8)]

    def rollout(prompts, trainer):
        """Each group of four generations gets the four shapes, as token ids of the tiny tokenizer."""
        tok = trainer.processing_class
        prompt_ids = trainer._tokenize_prompts(prompts)[0]
        completion_ids = [tok.encode(SHAPES[i % len(SHAPES)][0], add_special_tokens=False) + [tok.eos_token_id]
                          for i in range(len(prompts))]
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids,
                "logprobs": [[0.0] * len(ids) for ids in completion_ids]}

    paid: list[tuple[str, float]] = []

    def outcome_reward(prompts, completions, **kwargs):
        rewards = untagged_outcome_reward(prompts, completions, **kwargs)
        paid.extend((c[0]["content"] if isinstance(c, list) else c, r) for c, r in zip(completions, rewards))
        return rewards

    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, max_steps=1, learning_rate=1e-3,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=48,
                      logging_steps=1, report_to="none", save_strategy="no", beta=0.0, seed=0,
                      **_checkpointing_arg(False))
    trainer = trainer_class(GRPOTrainer)(model=str(tiny), reward_funcs=[format_reward, outcome_reward],
                                         args=args, train_dataset=Dataset.from_list(rows),
                                         rollout_func=rollout)
    trainer.train()

    assert len(paid) == 8 and {text for text, _ in paid} == {text for text, _, _ in SHAPES}
    for text, reward in paid:
        expected = next(r for t, r, _ in SHAPES if t == text)
        assert reward == expected, (text, reward)  # the gold alone is paid; no hedge, no negation
    log = next(r for r in trainer.state.log_history if "reading/hedge_or_negation" in r)
    share = sum(dodge for _, _, dodge in SHAPES) / len(SHAPES)
    assert log["reading/hedge_or_negation"] == pytest.approx(share)
    assert log["rewards/outcome_reward/mean"] == pytest.approx(1 / len(SHAPES))
