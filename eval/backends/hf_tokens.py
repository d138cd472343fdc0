"""Tokenising prompts that begin alike: their shared text is tokenised once.

The search's target sends every question of a story, and each prompt repeats the system prompt
and the story (~85% of its text) before a question: tokenising each prompt in full tokenised the
same story again for every question. Here texts sharing a long beginning are grouped (as
`hf_prefix.prefix_groups` groups token ids), each group's shared beginning is tokenised once
and each text's rest on its own, and the two are joined.

This gives the tokens of the whole text only where no token can straddle the cut. With a
GPT-2 style byte-level tokenizer (byte-level pre-tokenizer splitting by its regex, no
normalizer, no added token that strips or holds whitespace) a cut between a non-space and a
space character is a pre-token boundary, and BPE never merges across pre-tokens; the text
before the cut is split the same alone as in the whole (that regex has no look-behind, and its
one look-ahead only follows spaces). Other tokenizers tokenise every text in full. As a guard
against a tokenizer that passes those tests and still merges across the cut, each group's first
text is tokenised in full too, and a group whose join differs is tokenised in full (a guard,
not a proof: the other texts of the group are not checked).
"""
from __future__ import annotations

from typing import Any, Sequence

# texts whose common beginning is at least this share of the longer one are grouped, as in
# hf_prefix (a story's questions share 80-90% of a prompt, two stories 40-70%)
MIN_SHARED = 0.75


def encode(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text, no special tokens added (the chat template holds them)."""
    if not texts:
        return []
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def cuts_at_spaces(tokenizer: Any) -> bool:
    """True for a byte-level BPE tokenizer with the GPT-2 pre-tokenizer regex, where a text cut
    between a non-space and a space character tokenises as its two parts joined."""
    from tokenizers import pre_tokenizers

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or backend.normalizer is not None:
        return False
    pre = backend.pre_tokenizer
    if not isinstance(pre, pre_tokenizers.ByteLevel) or not pre.use_regex or pre.add_prefix_space:
        return False
    return not any(t.lstrip or t.rstrip or t.single_word or any(c.isspace() for c in t.content)
                   for t in tokenizer.added_tokens_decoder.values())


def text_groups(texts: Sequence[str]) -> list[tuple[int, list[int]]]:
    """(cut, indices) for runs of sorted texts sharing a long beginning: `cut` is the last
    boundary between a non-space and a space character within the run's common beginning
    (0 when there is none)."""
    order = sorted(range(len(texts)), key=texts.__getitem__)
    groups: list[tuple[int, list[int]]] = []
    members: list[int] = []
    shared = 0
    for i in order:
        if members:
            first = texts[members[0]]
            common = common_length(first, texts[i])
            if common >= MIN_SHARED * max(len(first), len(texts[i])):
                members.append(i)
                shared = min(shared, common)
                continue
            groups.append((space_cut(first, shared), members))
        members, shared = [i], len(texts[i])
    if members:
        groups.append((space_cut(texts[members[0]], shared), members))
    return groups


def common_length(a: str, b: str) -> int:
    """Length of the common beginning of two strings (bisection on slices: compared in C,
    where os.path.commonprefix steps through characters in Python)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def space_cut(text: str, limit: int) -> int:
    """The last j <= limit with text[j - 1] not a space and text[j] a space, else 0."""
    for j in range(min(limit, len(text) - 1), 0, -1):
        if text[j].isspace() and not text[j - 1].isspace():
            return j
    return 0


def encode_shared(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """`encode(tokenizer, texts)`, with a beginning that several texts share tokenised once."""
    if not cuts_at_spaces(tokenizer):
        return encode(tokenizer, texts)
    out: list[list[int] | None] = [None] * len(texts)
    groups = [(cut, members) for cut, members in text_groups(texts) if cut and len(members) > 1]
    heads = encode(tokenizer, [texts[members[0]][:cut] for cut, members in groups])
    checks = encode(tokenizer, [texts[members[0]] for _, members in groups])
    parts = [(cut, i, head) for (cut, members), head in zip(groups, heads) for i in members]
    tails = encode(tokenizer, [texts[i][cut:] for cut, i, _ in parts])
    for (cut, i, head), tail in zip(parts, tails):
        out[i] = head + tail
    for (cut, members), whole in zip(groups, checks):
        if out[members[0]] != whole:  # the join is not the whole text's tokens: no cut here
            for i, ids in zip(members, encode(tokenizer, [texts[i] for i in members])):
                out[i] = ids
    rest = [i for i, ids in enumerate(out) if ids is None]
    for i, ids in zip(rest, encode(tokenizer, [texts[i] for i in rest])):
        out[i] = ids
    return out  # type: ignore[return-value]
