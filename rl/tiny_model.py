"""The embedded default model: a tokenizer trained locally and a small Llama initialised from a config.

Nothing is downloaded. `build_tiny_model` trains a byte-level BPE tokenizer on the given texts,
creates a randomly initialised Llama-architecture model (tied embeddings) sized by its arguments and
saves both as an ordinary Hugging Face folder, so `AutoTokenizer.from_pretrained(path)` and
`AutoModelForCausalLM.from_pretrained(path)` (and TRL, accelerate, the eval backends) load it offline.

Choices that matter downstream (see ../shared/STACK.md):
- `<think>`, `</think>`, `<answer>`, `</answer>` are ordinary added tokens, not special ones: TRL
  decodes completions with `skip_special_tokens=True`, which would delete special tags before the
  reward sees them.
- The chat template wraps the assistant's text in `{% generation %}` markers, so assistant-only loss
  masks work; `<|end|>` closes every turn and is the eos token, so generation stops after the reply.
- A Llama config, not Qwen2: for a Qwen2 config `AutoTokenizer` swaps in Qwen's pre-tokenizer.

Command line:
    python -m rl.tiny_model --corpus stories.jsonl [more files] -o runs/tiny-model [--vocab-size 512 ...]
The corpus files may be JSONL in the row contract (the prompt messages, the answer and the reasoning
trace in meta that SFT uses as think text are read),
JSONL of stories (their "text" field), plain text (one passage per line), or an exported dataset
folder (save_to_disk, or a folder with train.jsonl), of which the train split is read.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

from eval.jsonl import InputError, numbered_records
from eval.paths import describe_error
from rl.targets import think_text

SPECIAL_TOKENS = {
    "pad_token": "<|pad|>",
    "bos_token": "<|begin|>",
    "eos_token": "<|end|>",
}
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
TAG_TOKENS = ("<think>", "</think>", "<answer>", "</answer>")

# One turn per message, each closed by <|end|>; only the assistant's reply (and its <|end|>, so the
# model learns to stop) sits inside the generation markers that give assistant-only loss masks.
CHAT_TEMPLATE = (
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|assistant|>\\n' }}"
    "{%- generation %}{{- message['content'] + '<|end|>' }}{%- endgeneration %}"
    "{{- '\\n' }}"
    "{%- else %}"
    "{{- '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|assistant|>\\n' }}{%- endif %}"
)


class CorpusError(ValueError):
    """A corpus file that cannot be read; the message names the file and line."""


def read_corpus(paths: Iterable[str | Path]) -> Iterator[str]:
    """Yield training texts from corpus files (row-contract JSONL, story JSONL or plain text)."""
    for path in map(Path, paths):
        if path.is_dir():
            yield from _folder_texts(path)
            continue
        if not path.is_file():
            raise CorpusError(f"{path}: no such file or folder")
        if path.suffix not in (".jsonl", ".json"):
            with path.open(encoding="utf-8") as f:
                yield from (line.strip() for line in f if line.strip())
            continue
        try:
            for lineno, record in numbered_records(path):
                yield from _texts_of(record, f"{path}: line {lineno}")
        except InputError as e:
            raise CorpusError(str(e)) from None


def _folder_texts(path: Path) -> Iterator[str]:
    """Texts of an exported dataset folder: its `train` split (save_to_disk or train.jsonl)."""
    if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
        from datasets import DatasetDict, load_from_disk

        ds = load_from_disk(str(path))
        if isinstance(ds, DatasetDict):
            if "train" not in ds:
                raise CorpusError(f"{path}: no train split (has {', '.join(ds)})")
            ds = ds["train"]
        for i, record in enumerate(ds):
            yield from _texts_of(record, f"{path} record {i}")
    elif (path / "train.jsonl").is_file():
        yield from read_corpus([path / "train.jsonl"])
    else:
        raise CorpusError(f"{path}: a folder must be a save_to_disk dataset or hold train.jsonl")


def _texts_of(record: object, where: str) -> Iterator[str]:
    if not isinstance(record, dict):
        raise CorpusError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if "prompt" in record:  # the row contract
        prompt = record["prompt"]
        if not isinstance(prompt, list):
            raise CorpusError(f"{where}: field 'prompt' must be a list of messages")
        for message in prompt:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                yield message["content"]
        for key in ("answer",):
            if isinstance(record.get(key), str):
                yield record[key]
        # The reasoning trace SFT teaches the model to write (rl.targets): a tokenizer that never
        # saw it splits its words ("elsewhere", "thinks") into many pieces.
        try:
            trace = think_text(record, default="")
        except (TypeError, ValueError):  # json.JSONDecodeError is a ValueError
            raise CorpusError(f"{where}: field 'meta' is neither an object nor JSON text") from None
        if trace:
            yield trace
        for choice in record.get("choices") or []:
            if isinstance(choice, str):
                yield choice
    elif isinstance(record.get("text"), str):  # a story record
        yield record["text"]
    else:
        raise CorpusError(f"{where}: expected a row (with 'prompt') or a story (with 'text')")


def _builtin_texts() -> list[str]:
    """Texts every run of the project feeds the model, so they tokenise compactly."""
    from eval.rows import SYSTEM_PROMPT
    from rl.targets import template_phrases

    return [SYSTEM_PROMPT, *template_phrases(), "yes", "no"]


def train_tokenizer(corpus: Iterable[str], vocab_size: int = 512):
    """A byte-level BPE tokenizer (transformers fast tokenizer) with the chat template and tags."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = [*SPECIAL_TOKENS.values(), *ROLE_TOKENS]
    if vocab_size < 256 + len(specials) + len(TAG_TOKENS):
        raise ValueError(f"vocab_size must be at least {256 + len(specials) + len(TAG_TOKENS)} "
                         f"(256 bytes, special tokens and tags), got {vocab_size}")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # offsets are needed for assistant-token masks (char_to_token on the rendered chat)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        # the tags are added afterwards, so the total vocabulary is exactly vocab_size
        vocab_size=vocab_size - len(TAG_TOKENS),
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=2,
        show_progress=False,
    )
    texts = [t for t in corpus if t]
    if not texts:
        raise ValueError("the corpus is empty: give at least one text")
    tok.train_from_iterator([*_builtin_texts(), *texts], trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TAG_TOKENS])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        chat_template=CHAT_TEMPLATE,
        model_max_length=2048,
        additional_special_tokens=list(ROLE_TOKENS),
        **SPECIAL_TOKENS,
    )


def build_tiny_model(
    corpus: Iterable[str],
    out_dir: str | Path,
    *,
    vocab_size: int = 512,
    hidden_size: int = 256,
    num_layers: int = 4,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 2048,
    model_vocab_size: int | None = None,
    seed: int = 0,
    say: Callable[[str], None] = lambda message: None,
) -> Path:
    """Train the tokenizer on `corpus`, initialise a Llama from `seed`, save both to `out_dir`.

    `model_vocab_size` pads the embedding beyond the tokenizer (as released models pad theirs):
    with it a random model gets the compute shape of a real one, e.g. Qwen2.5-0.5B's 151,936 rows,
    for throughput measurements. Ids the tokenizer lacks decode to nothing. `say` gets a line
    per step (the command prints them: importing torch alone takes seconds)."""
    say("loading torch and transformers")
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    if hidden_size % num_heads:
        raise ValueError(f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})")
    if num_heads % num_kv_heads:
        raise ValueError(f"num_heads ({num_heads}) must be divisible by num_kv_heads ({num_kv_heads})")
    out = Path(out_dir)
    say(f"training a byte-level BPE tokenizer (vocab {vocab_size})")
    tokenizer = train_tokenizer(corpus, vocab_size)
    tokenizer.model_max_length = max_position_embeddings
    ids = {name: tokenizer.convert_tokens_to_ids(tok) for name, tok in SPECIAL_TOKENS.items()}
    if model_vocab_size is not None and model_vocab_size < len(tokenizer):
        raise ValueError(f"model_vocab_size ({model_vocab_size}) is smaller than the tokenizer ({len(tokenizer)})")
    config = LlamaConfig(
        vocab_size=model_vocab_size or len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 3 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=ids["bos_token"],
        eos_token_id=ids["eos_token"],
        pad_token_id=ids["pad_token"],
    )
    say(f"initialising a Llama: {num_layers} layers, hidden {hidden_size}, vocab {config.vocab_size}")
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=ids["bos_token"], eos_token_id=ids["eos_token"], pad_token_id=ids["pad_token"]
    )
    say(f"saving to {out}")
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rl.tiny_model",
        description="Build the tiny offline model (local tokenizer + randomly initialised Llama).",
    )
    parser.add_argument("--corpus", nargs="+", required=True,
                        help="JSONL rows, JSONL stories ('text') or plain-text files")
    parser.add_argument("-o", "--out", required=True, help="output folder (Hugging Face format)")
    parser.add_argument("--vocab-size", type=int, default=512)
    parser.add_argument("--hidden-size", type=int, default=256)
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--num-heads", type=int, default=4)
    parser.add_argument("--num-kv-heads", type=int, default=2)
    parser.add_argument("--intermediate-size", type=int, default=None, help="default 3 x hidden size")
    parser.add_argument("--max-position-embeddings", type=int, default=2048)
    parser.add_argument("--model-vocab-size", type=int, default=None,
                        help="pad the embedding to this many rows (the shape of a real model)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.monotonic()

    def say(message: str) -> None:
        print(f"[tiny_model {time.monotonic() - start:4.1f}s] {message}", file=sys.stderr, flush=True)

    try:
        # read (and so check) the corpus before build_tiny_model imports torch and transformers
        texts = []
        for path in args.corpus:
            try:
                texts += read_corpus([path])
            except UnicodeDecodeError as e:
                raise CorpusError(f"{path}: not a UTF-8 text file ({e.reason})") from None
        if not any(texts):
            raise CorpusError(f"{' '.join(args.corpus)}: the corpus is empty: give at least one text")
        say(f"read {len(texts):,} texts")
        out = build_tiny_model(
            texts, args.out,
            vocab_size=args.vocab_size, hidden_size=args.hidden_size, num_layers=args.num_layers,
            num_heads=args.num_heads, num_kv_heads=args.num_kv_heads,
            intermediate_size=args.intermediate_size,
            max_position_embeddings=args.max_position_embeddings,
            model_vocab_size=args.model_vocab_size, seed=args.seed, say=say,
        )
    except (CorpusError, ValueError, OSError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    from transformers import AutoConfig

    n = AutoConfig.from_pretrained(out)
    print(f"wrote {out} (vocab {n.vocab_size}, hidden {n.hidden_size}, layers {n.num_hidden_layers})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
