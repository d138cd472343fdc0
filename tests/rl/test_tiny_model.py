"""The tiny offline model: a normal Hugging Face folder, deterministic, with the tags TRL needs."""
import json

import pytest

from eval.answers import tagged
from rl.tiny_model import TAG_TOKENS, CorpusError, build_tiny_model, main, read_corpus

from .conftest import toy_rows, write_jsonl

SMALL = dict(vocab_size=400, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    rows = write_jsonl(root / "rows.jsonl", toy_rows(60, "toy-location"))
    stories = root / "stories.jsonl"
    stories.write_text("".join(json.dumps({"text": r["prompt"][-1]["content"]}) + "\n"
                               for r in toy_rows(20, "toy-knowledge")))
    plain = root / "plain.txt"
    plain.write_text("Anne walks into the garden.\n\nTom hides the key under the mat.\n")
    return {"rows": rows, "stories": stories, "plain": plain}


def test_reloads_offline_with_auto_classes(tmp_path, corpus):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = build_tiny_model(read_corpus([corpus["rows"]]), tmp_path / "m", **SMALL)
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out)
    assert len(tok) == model.config.vocab_size == 400
    assert model.config.model_type == "llama" and model.config.tie_word_embeddings
    assert model.generation_config.eos_token_id == tok.eos_token_id == tok.convert_tokens_to_ids("<|end|>")
    assert tok.pad_token is not None and tok.pad_token_id != tok.eos_token_id

    # the tags are single, ordinary tokens: they survive skip_special_tokens (TRL decodes that way)
    reply = tagged("basket", "Anne left.")
    ids = tok(reply, add_special_tokens=False)["input_ids"]
    for tag in TAG_TOKENS:
        assert tok.convert_tokens_to_ids(tag) in ids
        assert tag not in tok.all_special_tokens
    assert tok.decode(ids, skip_special_tokens=True) == reply

    # the chat template marks exactly the assistant reply (and its end token) for the loss
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Where?"},
                {"role": "assistant", "content": reply}]
    enc = tok.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    kept = [i for i, m in zip(enc["input_ids"], enc["assistant_masks"]) if m]
    assert tok.decode(kept) == reply + "<|end|>"
    prompt = tok.apply_chat_template(messages[:2], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|assistant|>\n")


def test_deterministic_for_a_seed(tmp_path, corpus):
    a = build_tiny_model(read_corpus([corpus["rows"]]), tmp_path / "a", **SMALL, seed=3)
    b = build_tiny_model(read_corpus([corpus["rows"]]), tmp_path / "b", **SMALL, seed=3)
    c = build_tiny_model(read_corpus([corpus["rows"]]), tmp_path / "c", **SMALL, seed=4)
    for name in ("tokenizer.json", "model.safetensors", "config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()


def test_corpus_formats(corpus, tmp_path):
    texts = list(read_corpus([corpus["rows"], corpus["stories"], corpus["plain"]]))
    assert any(t.startswith("You are answering questions") for t in texts)  # row prompts
    assert any("Does" in t for t in texts)  # story "text"
    assert "Tom hides the key under the mat." in texts  # plain text, one passage a line
    from datasets import Dataset, DatasetDict

    DatasetDict({"train": Dataset.from_list(toy_rows(3, "toy-location"))}).save_to_disk(str(tmp_path / "dd"))
    assert len(list(read_corpus([tmp_path / "dd"]))) == 3 * 3  # system, user, answer per row


def test_command_line(tmp_path, corpus, capsys):
    out = tmp_path / "cli"
    assert main(["--corpus", str(corpus["rows"]), str(corpus["plain"]), "-o", str(out),
                 "--hidden-size", "64", "--num-layers", "1", "--vocab-size", "300"]) == 0
    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 1
    capsys.readouterr()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"neither": 1}\n')
    assert main(["--corpus", str(bad), "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {bad}: line 2: expected a row (with 'prompt') or a story (with 'text')"
    assert main(["--corpus", str(corpus["plain"]), "-o", str(tmp_path / "y"), "--hidden-size", "30"]) == 2
    assert "divisible" in capsys.readouterr().err
    with pytest.raises(CorpusError, match="no such file"):
        list(read_corpus([tmp_path / "nope.txt"]))


def test_padded_embedding_gives_a_real_model_shape(tmp_path, corpus):
    from transformers import AutoConfig, AutoTokenizer

    out = build_tiny_model(read_corpus([corpus["plain"], corpus["rows"]]), tmp_path / "p", **SMALL,
                           model_vocab_size=1024)
    assert AutoConfig.from_pretrained(out).vocab_size == 1024
    tok = AutoTokenizer.from_pretrained(out)
    assert len(tok) == 400 and tok.decode([tok.convert_tokens_to_ids("<answer>"), 1000]) == "<answer>"
    with pytest.raises(ValueError, match="smaller than the tokenizer"):
        build_tiny_model(read_corpus([corpus["plain"]]), tmp_path / "q", **SMALL, model_vocab_size=10)


def test_the_reasoning_trace_sft_writes_is_in_the_tokenizer_corpus(tmp_path):
    """SFT with `think: trace` makes the model write meta.reasoning: its words must be tokens,
    not letters (the trace's "elsewhere" was 7 pieces before the corpus read it)."""
    from transformers import AutoTokenizer

    trace = "Step 2: Lars moved the pear. Sofia was elsewhere. So Sofia thinks the pear is in the tin."
    rows = toy_rows(60, "toy-location")
    for r in rows:
        r["meta"] = json.dumps({**json.loads(r.get("meta") or "{}"), "reasoning": trace})
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    assert trace in list(read_corpus([path]))
    # a vocabulary large enough for every word of this small corpus to become one token
    out = build_tiny_model(read_corpus([path]), tmp_path / "m", **{**SMALL, "vocab_size": 2048})
    tok = AutoTokenizer.from_pretrained(out)
    assert len(tok(" elsewhere", add_special_tokens=False)["input_ids"]) == 1

    rows[1]["meta"] = "not json"
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(CorpusError, match=r"bad.jsonl: line 2: field 'meta' is neither an object nor JSON text"):
        list(read_corpus([bad]))
