"""Tokenising prompts that begin alike: the shared text once, the same token ids as in full."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from eval.backends.hf_tokens import (  # noqa: E402
    common_length, cuts_at_spaces, encode, encode_shared, space_cut, text_groups)

STORIES = [
    "Sally put the marble in the basket.  Sally left the room.\tAnne moved the marble 12 times",
    "Anne put the crate in the kitchen. Sally entered the garden. Anne left the kitchen.\n" * 3,
    "Sally moved the marble to the bathtub...",
]
QUESTIONS = ["Where will Sally look for the marble?", "  Does Anne know about it?",
             "<answer> 3 </answer>", "\n\nOption A or option B?", "'s it there"]


def texts() -> list[str]:
    """Questions after a few stories (cuts fall before spaces, tabs, newlines and digits), and
    texts that share nothing long."""
    out = [f"<|begin|><|system|>\nAnswer briefly.<|end|>\n<|user|>\nStory: {story}{question}"
           for question in QUESTIONS for story in STORIES]
    return out + ["The crate.", "Sally", "Sally ", "Sally  ", ""]


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model_dir))


def test_shared_beginnings_give_the_ids_of_the_whole_texts(tokenizer):
    assert cuts_at_spaces(tokenizer)
    assert encode_shared(tokenizer, texts()) == [
        tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts()]
    assert encode_shared(tokenizer, []) == []


def test_a_cut_whose_join_differs_is_not_used(tokenizer, monkeypatch):
    """Each group's first text is tokenised in full as a check: a cut inside a word (which the
    rule never makes) would split a token, and the group is then tokenised in full."""
    import eval.backends.hf_tokens as hf_tokens

    monkeypatch.setattr(hf_tokens, "space_cut", lambda text, limit: limit)
    mid_word = [f"Story: {STORIES[0]} the {end}" for end in ("marble", "marsh", "marbles")]
    assert [len(members) for _, members in text_groups(mid_word)] == [3]
    assert encode_shared(tokenizer, mid_word) == encode(tokenizer, mid_word)
    heads = encode(tokenizer, [mid_word[0][:-3]])[0] + encode(tokenizer, [mid_word[0][-3:]])[0]
    assert heads != encode(tokenizer, mid_word[:1])[0]  # the cut did split a token


def test_other_tokenizers_tokenise_every_text_in_full(tokenizer):
    from tokenizers import pre_tokenizers

    other = tokenizer.__class__.from_pretrained(tokenizer.name_or_path)
    other.backend_tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    assert not cuts_at_spaces(other)
    assert encode_shared(other, texts()) == encode(other, texts())


def test_groups_cut_before_the_last_space_they_share():
    rows = ["story one. Q: where?", "story one. Q: who?", "other", "story one. Q: where?"]
    # sorted: "other" alone (no space to cut at); the three others share "story one. Q: wh",
    # cut before " wh"
    assert text_groups(rows) == [(0, [2]), (13, [0, 3, 1])]
    assert common_length("abcd", "abXd") == 2 and common_length("ab", "abc") == 2
    assert space_cut("ab  cd", 6) == 2 and space_cut("  ab", 4) == 0 and space_cut("", 0) == 0
