"""Shared fixtures of the eval tests: a tiny randomly initialised Llama, built offline once."""
from __future__ import annotations

from pathlib import Path

import pytest

TINY_CORPUS = [
    "Sally put the marble in the basket. Sally left the room. Anne moved the marble to the box.",
    "Where will Sally look for the marble? <think> Sally did not see the move. </think> <answer> basket </answer>",
    "Does Anne know about it? <answer> yes </answer> <answer> no </answer> knows about it",
    "Option A. Option B. Option C. The answer is B. The crate, the bathtub, the kitchen, the garden.",
] * 20


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A 2-layer, 64-wide Llama with a locally trained 400-token BPE tokenizer and chat template."""
    pytest.importorskip("torch")
    from rl.tiny_model import build_tiny_model

    return build_tiny_model(
        TINY_CORPUS, tmp_path_factory.mktemp("tiny-model"),
        vocab_size=400, hidden_size=64, num_layers=2, num_heads=2, num_kv_heads=1, seed=0,
    )
