"""Prefix sharing in the hf backend: the same greedy answers as the plain path, faster."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from eval.backends import load_backend  # noqa: E402
from eval.backends.base import GenerationConfig  # noqa: E402
from eval.backends.hf_greedy import AnswerBank, plain_greedy  # noqa: E402
from eval.backends.hf_prefix import (  # noqa: E402
    ReservedLayer, prefix_groups, shared_prefix_batches)

STORIES = [
    "Sally put the marble in the basket. Sally left the room. Anne moved the marble to the box.",
    "Anne put the crate in the kitchen. Sally entered the garden. Anne left the kitchen. " * 2,
    "Sally moved the marble to the bathtub.",
]
QUESTIONS = ["Where will Sally look for the marble?", "Does Anne know about it?",
             "Where is the marble now?", "Option A or option B?"]


def conversations() -> list[list[dict[str, str]]]:
    """Questions about a few stories, interleaved, and two prompts sharing nothing long."""
    out = [[{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"Story: {story}\nQuestion: {question}"}]
           for question in QUESTIONS for story in STORIES]
    return out + [[{"role": "user", "content": "The crate."}],
                  [{"role": "user", "content": "Sally"}]]


@pytest.fixture(scope="module")
def lively_model(tiny_model_dir, tmp_path_factory):
    """The tiny random model with its weight matrices drawn again at std 0.2: at the usual
    0.02 its greedy answer to every prompt is the same run of newlines, which would make the
    comparison below vacuous; these answers differ from prompt to prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path_factory.mktemp("lively-model")
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() == 2:
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.2)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(tiny_model_dir)).save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def backends(lively_model):
    plain = load_backend("hf", str(lively_model), device="cpu", dtype="float32", batch_size=5)
    shared = load_backend("hf", str(lively_model), device="cpu", dtype="float32", batch_size=5,
                          share_prefixes=True)
    return plain, shared


def test_greedy_answers_equal_the_plain_path(backends):
    plain, shared = backends
    prompts = conversations()
    config = GenerationConfig(max_new_tokens=16)
    seen = []
    fast = shared.generate(prompts, config, on_result=lambda i, c: seen.append(i))
    assert sorted(seen) == list(range(len(prompts)))
    slow = plain.generate(prompts, config)
    assert [c.texts for c in fast] == [c.texts for c in slow]
    assert [(c.prompt_tokens, c.completion_tokens) for c in fast] == [
        (c.prompt_tokens, c.completion_tokens) for c in slow]
    assert len({c.text for c in fast}) > len(prompts) // 2  # answers that tell prompts apart
    assert shared.describe()["share_prefixes"] and not plain.describe()["share_prefixes"]


def test_greedy_answers_equal_in_one_batch_and_with_stop_strings(backends, lively_model):
    plain, _ = backends
    prompts = conversations()
    one_batch = load_backend("hf", str(lively_model), device="cpu", dtype="float32", batch_size=64,
                             share_prefixes=True)
    config = GenerationConfig(max_new_tokens=12, stop=("e",))
    assert [c.texts for c in one_batch.generate(prompts, config)] == [
        c.texts for c in plain.generate(prompts, config)]


def test_greedy_answers_equal_whatever_the_guessed_answer(backends, lively_model):
    """The drafts checked in each pass (earlier answers that begin as a row's answer so far)
    are only guesses: accepted in full, in part or not at all, the answers are the plain
    path's."""
    plain, _ = backends
    prompts = conversations()
    config = GenerationConfig(max_new_tokens=10)
    expected = plain.generate(prompts, config)
    tokenizer = plain.tokenizer
    answer = tokenizer(expected[0].text, add_special_tokens=False)["input_ids"]
    other = tokenizer(expected[1].text, add_special_tokens=False)["input_ids"]
    guesser = load_backend("hf", str(lively_model), device="cpu", dtype="float32", batch_size=64,
                           share_prefixes=True)
    banks = ([answer + [tokenizer.eos_token_id]], [answer[:3] + [7, 7, 7]], [[7] * 30], [],
             # the most frequent answer first, then others that begin alike
             [answer, answer, other[:2], other[:2] + [7], other[:1] + [9] * 4, other])
    for answers in banks:
        guesser._answers = AnswerBank()
        guesser._answers.add(answers)
        got = guesser.generate(prompts, config)
        assert [c.texts for c in got] == [c.texts for c in expected]
        assert [c.completion_tokens for c in got] == [c.completion_tokens for c in expected]


def test_answers_alike_are_taken_from_the_draft(tiny_model_dir):
    """The tiny model at its initial weights gives nearly every prompt the same answer (a run
    of newlines), so from the second batch on most rows accept the whole draft in the prefill,
    the others part of it."""
    plain = load_backend("hf", str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4)
    shared = load_backend("hf", str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4,
                          share_prefixes=True)
    prompts = conversations()
    config = GenerationConfig(max_new_tokens=12)
    fast = shared.generate(prompts, config)
    assert [(c.texts, c.completion_tokens) for c in fast] == [
        (c.texts, c.completion_tokens) for c in plain.generate(prompts, config)]
    assert len({c.text for c in fast}) == 2 and len(shared._answers.guess([])) == 12


def test_logits_processors_take_generate(backends, lively_model):
    from transformers import GenerationConfig as HFGenerationConfig

    plain, shared = backends
    assert plain_greedy(shared._generation_config(GenerationConfig(max_new_tokens=4)))
    assert not plain_greedy(shared._generation_config(GenerationConfig(stop=("e",))))
    assert not plain_greedy(HFGenerationConfig(repetition_penalty=1.3))
    penalised = [load_backend("hf", str(lively_model), device="cpu", dtype="float32", batch_size=8,
                              share_prefixes=share) for share in (False, True)]
    for backend in penalised:
        backend.hf_model.generation_config.repetition_penalty = 1.5
    config = GenerationConfig(max_new_tokens=10)
    slow, fast = (backend.generate(conversations(), config) for backend in penalised)
    assert [c.texts for c in fast] == [c.texts for c in slow]
    assert [c.texts for c in fast] != [c.texts for c in plain.generate(conversations(), config)]


def test_answer_bank_guesses_while_most_answers_that_began_alike_agree():
    bank = AnswerBank()
    assert bank.guess([]) == [] and bank.guess([5]) == []
    bank.add([[5, 6, 2], [5, 7, 2], [5, 7, 2], [4]])
    assert bank.guess([]) == [5, 7, 2] and bank.guess([5]) == [7, 2] and bank.guess([5, 6]) == [2]
    assert bank.guess([4]) == [] and bank.guess([3]) == [] and bank.guess([5, 7, 2]) == []
    bank.add([[4], [4], [5, 8, 2]])  # 5 then 7 is now 2 of the 4 answers beginning with 5
    assert bank.guess([]) == [5, 7, 2] and bank.guess([5]) == [7, 2]
    bank.add([[5, 6, 2]])  # 5: 6 and 7 twice each, 8 once; 7 came first but is under half
    assert bank.guess([]) == [5] and bank.guess([5, 6]) == [2]
    bank.add([list(range(40))])
    assert bank.guess([0, 1]) == list(range(2, 16))  # a long answer is kept in part
    small = AnswerBank(limit=3)
    small.add([[1], [1], [2]])  # (), (1,) and (2,): three beginnings
    small.add([[3]])  # a fourth would pass the limit: the bank starts again
    assert small.guess([]) == [3] and small.counts == {(): 1, (3,): 1}


def test_sampling_takes_the_plain_path(backends):
    plain, shared = backends
    config = GenerationConfig(max_new_tokens=8, temperature=1.0, n=2, seed=5)
    prompts = conversations()[:4]
    assert [c.texts for c in shared.generate(prompts, config)] == [
        c.texts for c in plain.generate(prompts, config)]


def test_prefix_groups_are_runs_that_share_most_of_the_prompt():
    story_a, story_b = [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 9, 9, 9, 9, 9, 9]
    rows = [story_a + [10], story_a + [11, 12], story_b + [10], story_b + [10], [1, 2]]
    # the two stories share 2 tokens of 9: separate groups; identical prompts keep one token
    # each to prefill, so that generation has the logits of their last token
    assert prefix_groups(rows) == [(8, [0, 1]), (8, [2, 3]), (1, [4])]
    assert prefix_groups([]) == []


def test_reserved_layer_grows_past_its_room():
    import torch

    keys = torch.arange(2 * 1 * 3 * 2, dtype=torch.float32).reshape(2, 1, 3, 2)
    layer = ReservedLayer(keys, -keys, room=4)
    for step in range(3):
        new = torch.full((2, 1, 1, 2), float(step))
        k, v = layer.update(new, -new)
    assert k.shape == (2, 1, 6, 2) and layer.get_seq_length() == 6
    assert torch.equal(k[:, :, :3], keys) and torch.equal(v[:, :, 3:], -k[:, :, 3:])
    assert torch.equal(k[:, :, 5], torch.full((2, 1, 2), 2.0))


def test_batches_keep_groups_together():
    a, b, c = [1, 2, 3, 4, 5, 6, 7, 8], [5, 5, 5, 5, 5, 5, 5, 5], [9, 9, 9, 9, 9, 9, 9, 9]
    encoded = [c + [1], a + [1], b + [1], a + [2], c + [2], a + [3], b + [2], c + [3]]
    # sorted: a a a | b b | c c c; a batch of 4 takes a's three, not a's and one of b's
    assert shared_prefix_batches(range(8), encoded, 4) == [[1, 3, 5], [2, 6], [0, 4, 7]]
    assert shared_prefix_batches(range(8), encoded, 5) == [[1, 3, 5, 2, 6], [0, 4, 7]]
    assert shared_prefix_batches(range(8), encoded, 2) == [[1, 3], [5], [2, 6], [0, 4], [7]]
    assert shared_prefix_batches([2, 6], encoded, 8) == [[2, 6]]


def test_batches_take_groups_in_the_order_of_their_longest_rest():
    a, b, c = [1, 2, 3, 4, 5, 6, 7, 8], [5, 5, 5, 5, 5, 5, 5, 5], [9, 9, 9, 9, 9, 9, 9, 9]
    # rests after the shared prefix: a's up to 2 tokens, b's and c's 1 (same prefix lengths)
    encoded = [a + [1], a + [2, 2], b + [1], b + [2], c + [1], c + [2]]
    # a batch pads its rows' rests to its longest: b and c together, a (with 2) after them
    assert shared_prefix_batches(range(6), encoded, 4) == [[2, 3, 4, 5], [0, 1]]
