"""A tiny Llama in a GGUF file, written with the `gguf` package as llama.cpp writes real ones
(byte-level BPE tokenizer, ChatML template, Q4_1 weights): the import tests convert it."""
from __future__ import annotations

from pathlib import Path

import numpy as np

CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)


def _byte_alphabet() -> list[str]:
    """GPT-2's printable stand-ins for the 256 bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return [chr(c) for c in chars]


def write_tiny_gguf(path: Path, hidden: int = 64, layers: int = 2, seed: int = 0) -> Path:
    import gguf

    rng = np.random.default_rng(seed)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    merges = ["Ġ t", "h e", "Ġt he", "a n", "Ġ a"]
    tokens = specials + _byte_alphabet() + [m.replace(" ", "") for m in merges]
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny test llama")
    w.add_license("apache-2.0")
    w.add_block_count(layers)
    w.add_context_length(16384)  # the benchmarks' long prompts fit, one byte a token
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(2 * hidden)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(hidden // 4)
    w.add_vocab_size(len(tokens))
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([3] * len(specials) + [1] * (len(tokens) - len(specials)))
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    def tensor(name: str, *shape: int, quantized: bool = True) -> None:
        data = (rng.standard_normal(shape) * 0.2).astype(np.float32)
        if quantized:
            kind = gguf.GGMLQuantizationType.Q4_1
            w.add_tensor(name, gguf.quants.quantize(data, kind), raw_dtype=kind)
        else:
            w.add_tensor(name, data)

    kv = hidden // 2
    tensor("token_embd.weight", len(tokens), hidden, quantized=False)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", hidden, quantized=False)
        tensor(f"blk.{i}.ffn_norm.weight", hidden, quantized=False)
        tensor(f"blk.{i}.attn_q.weight", hidden, hidden)
        tensor(f"blk.{i}.attn_k.weight", kv, hidden)
        tensor(f"blk.{i}.attn_v.weight", kv, hidden)
        tensor(f"blk.{i}.attn_output.weight", hidden, hidden)
        tensor(f"blk.{i}.ffn_gate.weight", 2 * hidden, hidden)
        tensor(f"blk.{i}.ffn_up.weight", 2 * hidden, hidden)
        tensor(f"blk.{i}.ffn_down.weight", hidden, 2 * hidden)
    tensor("output_norm.weight", hidden, quantized=False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
