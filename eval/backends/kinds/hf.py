"""A local transformers model: chat template, left padding, batched generation on CPU or CUDA.

Prompts are sorted by length before batching (less padding), generated `batch_size` at a time and
reported through `on_result` in the caller's indices as each batch finishes. With
`share_prefixes=True` greedy prompts that begin alike (the questions of one story) go into one
batch and have their common prefix tokenised (`hf_tokens.py`) and prefilled (`hf_prefix.py`)
once, and plain greedy decoding checks guesses taken from earlier answers as it goes
(`hf_greedy.py`); the answers are those of `generate`. A batch that runs out of GPU memory is
split in half and retried. A prompt longer than the model's context comes back as a
`Completion` with `error` set instead of stopping the run.

Our `GenerationConfig` always wins over the model's own generation defaults for the settings it
holds (greedy/temperature, top_p, top_k, n, max_new_tokens, stop strings, seed); top-k is off unless
`top_k` is set, so that sampling means the same thing here as in the vLLM and HTTP backends. The model's other
defaults (eos tokens, repetition penalty) are kept.
"""
from __future__ import annotations

import copy
from typing import Any, Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval.backends import BackendError, options_error
from eval.backends.base import Backend, Completion, Conversation, GenerationConfig, OnResult

DTYPES = ("auto", "float32", "bfloat16", "float16")


class HFOptions(BaseModel):
    """The hf backend's options (`-O KEY=VALUE`), each declared once with its help."""

    model_config = ConfigDict(extra="forbid")
    device: str = Field("auto", description="auto, cpu, cuda, cuda:1")
    dtype: Literal[DTYPES] = Field(  # type: ignore[valid-type]
        "auto", description="auto (the checkpoint's on GPU; on CPU bfloat16 with AMX-BF16, else "
                            "float32: eval.cpu_precision), float32, bfloat16, float16")
    batch_size: int = Field(8, ge=1, description="prompts generated together")
    revision: Optional[str] = Field(None, description="a hub revision (online only)")
    trust_remote_code: bool = Field(False, description="run the model repository's own code")
    chat_template: Optional[str] = Field(None, description="a Jinja chat template instead of the tokenizer's")
    max_input_tokens: Optional[int] = Field(
        None, ge=1, description="longest prompt (default: the model's max_position_embeddings)")
    device_map: Optional[str] = Field(None, description="auto spreads a model too big for one GPU over all")
    share_prefixes: bool = Field(
        False, description="prefill a prefix shared by several greedy prompts once (same answers; "
                           "much faster when many prompts repeat a long story)")


class HFBackend(Backend):
    name = "hf"
    local_weights = True
    options_model = HFOptions

    def __init__(self, model: str, **options: Any) -> None:
        """`model`: a local folder (or a hub id when online); `options`: the fields of
        `HFOptions`, checked there (one line naming a bad option, as every backend does)."""
        try:
            o = HFOptions(**options)
        except ValidationError as e:
            raise options_error(e, "hf backend") from None
        self.options = o
        device, dtype, revision, device_map = o.device, o.dtype, o.revision, o.device_map
        trust_remote_code, chat_template, max_input_tokens = o.trust_remote_code, o.chat_template, o.max_input_tokens
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise BackendError(f"the hf backend needs torch and transformers ({e.name} is missing): "
                               "install the `train` extra") from None
        self.model = str(model)
        self.batch_size = o.batch_size
        self.revision = revision
        self.share_prefixes = o.share_prefixes
        self._answers = None  # the hf_greedy.AnswerBank of greedy shared-prefix batches
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        torch_dtype: Any
        if dtype == "auto" and (device.startswith("cuda") or device_map):
            torch_dtype = "auto"
        elif dtype == "auto":
            from eval.cpu_precision import cpu_precision

            torch_dtype = torch.bfloat16 if cpu_precision()[0] == "bf16" else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                self.model, revision=revision, trust_remote_code=trust_remote_code, padding_side="left"
            )
            self.hf_model = AutoModelForCausalLM.from_pretrained(
                self.model, revision=revision, trust_remote_code=trust_remote_code, dtype=torch_dtype,
                **({"device_map": device_map} if device_map else {}),
            )
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise BackendError(f"cannot load model {self.model!r}: {first}") from None
        if not device_map:
            self.hf_model.to(device)
        self.hf_model.eval()
        self._prepare_tokenizer(chat_template)
        limit = max_input_tokens or getattr(self.hf_model.config, "max_position_embeddings", None)
        self.max_input_tokens = int(limit) if limit else None

    @classmethod
    def from_objects(cls, model: Any, tokenizer: Any, *, name: str = "in-memory",
                     batch_size: int = 8) -> "HFBackend":
        """Wrap an already loaded model and tokenizer (e.g. a policy being trained)."""
        self = cls.__new__(cls)
        self.model, self.batch_size, self.revision = name, int(batch_size), None
        self.share_prefixes, self._answers = False, None
        self.hf_model, self.tokenizer = model, tokenizer
        self.device = str(next(model.parameters()).device)
        self.tokenizer.padding_side = "left"
        self._prepare_tokenizer(None)
        limit = getattr(model.config, "max_position_embeddings", None)
        self.max_input_tokens = int(limit) if limit else None
        return self

    def _prepare_tokenizer(self, chat_template: str | None) -> None:
        tok = self.tokenizer
        if chat_template:
            tok.chat_template = chat_template
        if not getattr(tok, "chat_template", None):
            raise BackendError(f"model {self.model!r} has no chat template; pass one with "
                               "--backend-option chat_template=... (a Jinja string)")
        if tok.pad_token_id is None:  # many causal LMs ship without one; padding is masked anyway
            tok.pad_token = tok.eos_token

    def describe(self) -> dict:
        import torch
        import transformers

        dtype = str(next(self.hf_model.parameters()).dtype).replace("torch.", "")
        return {
            "backend": self.name, "model": self.model, "revision": self.revision,
            "device": self.device, "dtype": dtype, "batch_size": self.batch_size,
            "share_prefixes": self.share_prefixes,
            "transformers": transformers.__version__, "torch": torch.__version__,
        }

    # ----------------------------------------------------------------------------------------

    def render(self, conversation: Conversation) -> str:
        """The prompt text the model sees: the chat template with the generation prompt."""
        return self.tokenizer.apply_chat_template(
            [dict(m) for m in conversation], add_generation_prompt=True, tokenize=False
        )

    def generate(
        self,
        prompts: Sequence[Conversation],
        config: GenerationConfig = GenerationConfig(),
        *,
        on_result: OnResult | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        import torch
        from tqdm.auto import tqdm

        results: list[Completion | None] = [None] * len(prompts)

        def finish(i: int, completion: Completion) -> None:
            results[i] = completion
            if on_result:
                on_result(i, completion)

        gen_config = self._generation_config(config)
        texts = [self.render(p) for p in prompts]
        if self._shares_prefixes(gen_config):
            from eval.backends.hf_tokens import encode_shared

            encoded = encode_shared(self.tokenizer, texts)
        else:  # the chat template already holds any BOS token: no special tokens added again
            encoded = [self.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        todo = []
        for i, ids in enumerate(encoded):
            if self.max_input_tokens and len(ids) + config.max_new_tokens > self.max_input_tokens:
                finish(i, Completion(prompt_tokens=len(ids), error=(
                    f"prompt has {len(ids)} tokens; with max_new_tokens={config.max_new_tokens} "
                    f"it exceeds the model's {self.max_input_tokens}-token context")))
            else:
                todo.append(i)
        if self._shares_prefixes(gen_config):
            from eval.backends.hf_prefix import shared_prefix_batches

            batches = shared_prefix_batches(todo, encoded, self.batch_size)
        else:
            todo.sort(key=lambda i: -len(encoded[i]))  # longest first: an OOM shows up at once
            batches = [todo[start:start + self.batch_size]
                       for start in range(0, len(todo), self.batch_size)]
        if config.seed is not None:
            torch.manual_seed(config.seed)
        bar = tqdm(total=len(prompts), desc=f"{self.name}:{self.model}", disable=not progress,
                   initial=len(prompts) - len(todo), leave=False)
        try:
            for batch in batches:
                for i, completion in self._generate_batch(batch, encoded, gen_config, config):
                    finish(i, completion)
                bar.update(len(batch))
        finally:
            bar.close()
        return [r if r is not None else Completion(error="not generated") for r in results]

    def _generation_config(self, config: GenerationConfig):
        gen = copy.deepcopy(self.hf_model.generation_config)
        sample = config.temperature > 0
        gen.max_new_tokens = config.max_new_tokens
        gen.do_sample = sample
        gen.num_return_sequences = config.n if sample else 1
        gen.temperature = config.temperature if sample else None
        gen.top_p = config.top_p if sample else None
        gen.top_k = (config.top_k or 0) if sample else None
        gen.min_p = None
        gen.stop_strings = list(config.stop) or None
        gen.pad_token_id = self.tokenizer.pad_token_id
        if gen.eos_token_id is None:
            gen.eos_token_id = self.tokenizer.eos_token_id
        gen.max_length = None
        return gen

    def _shares_prefixes(self, gen_config) -> bool:
        # sampled rows would need their cache expanded n times; greedy is what repeats stories
        return self.share_prefixes and not gen_config.do_sample

    def _generate_batch(self, batch, encoded, gen_config, config):
        import torch

        try:
            return list(self._run_batch(batch, encoded, gen_config, config))
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise BackendError(f"one prompt of {len(encoded[batch[0]])} tokens does not fit in "
                                   "GPU memory; lower max_new_tokens or use a larger device") from None
            torch.cuda.empty_cache()
            half = len(batch) // 2
            return (self._generate_batch(batch[:half], encoded, gen_config, config)
                    + self._generate_batch(batch[half:], encoded, gen_config, config))

    def _run_batch(self, batch, encoded, gen_config, config):
        rows = [encoded[i] for i in batch]
        eos = gen_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        if self._shares_prefixes(gen_config):
            from eval.backends.hf_greedy import (DRAFT_TOKENS, AnswerBank, greedy_decode,
                                                 plain_greedy)
            from eval.backends.hf_prefix import cache_argument, prefilled_inputs

            # room for the new tokens and for guesses the rows do not keep (beyond it the
            # cache moves to twice the room)
            inputs = prefilled_inputs(self.hf_model, rows, self.tokenizer.pad_token_id,
                                      gen_config.max_new_tokens + 2 * DRAFT_TOKENS)
            if plain_greedy(gen_config):
                if self._answers is None:
                    self._answers = AnswerBank()
                new_tokens = greedy_decode(self.hf_model, inputs, cache_argument(self.hf_model),
                                           gen_config.max_new_tokens, eos_ids,
                                           self.tokenizer.pad_token_id, self._answers)
            else:
                new_tokens = self._generate_rows(inputs, gen_config)
        else:
            features = self.tokenizer.pad({"input_ids": rows}, padding=True, return_tensors="pt")
            inputs = {key: features[key].to(self.hf_model.device)
                      for key in ("input_ids", "attention_mask")}
            new_tokens = self._generate_rows(inputs, gen_config)
        per_prompt = gen_config.num_return_sequences
        for k, i in enumerate(batch):
            texts, reasons, used = [], [], 0
            for row in new_tokens[k * per_prompt : (k + 1) * per_prompt]:
                row, ended = _until_eos(row, eos_ids, self.tokenizer.pad_token_id)
                used += len(row)
                text = self.tokenizer.decode(row, skip_special_tokens=True)
                cut = _cut_at_stop(text, config.stop)
                texts.append(cut)
                # a row that met neither eos nor a stop string ran to max_new_tokens
                reasons.append("stop" if ended or cut != text else "length")
            if len(texts) < config.n:  # greedy: n identical samples, generated once
                texts, reasons = texts * config.n, reasons * config.n
                used *= config.n
            yield i, Completion(texts=texts, prompt_tokens=len(encoded[i]), completion_tokens=used,
                                finish_reasons=reasons)

    def _generate_rows(self, inputs, gen_config) -> list[list[int]]:
        import torch

        with torch.inference_mode():
            output = self.hf_model.generate(**inputs, generation_config=gen_config,
                                            tokenizer=self.tokenizer)
        return output[:, inputs["input_ids"].shape[1]:].tolist()


def _until_eos(tokens: list[int], eos_ids: set[int], pad_id: int | None) -> tuple[list[int], bool]:
    """The tokens before the first eos, and whether there was one."""
    for j, t in enumerate(tokens):
        if t in eos_ids:
            return tokens[:j], True
    while tokens and tokens[-1] == pad_id:
        tokens = tokens[:-1]
    return tokens, False


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Text up to the first stop string (excluded), as the HTTP APIs and vLLM return it."""
    cut = min((p for p in (text.find(s) for s in stop if s) if p >= 0), default=-1)
    return text[:cut] if cut >= 0 else text


BACKEND = HFBackend
