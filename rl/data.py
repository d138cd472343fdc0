"""Load, validate and mix training data in the row contract (DESIGN.md, "Rows").

A source is a `datasets.save_to_disk` folder (a `DatasetDict`, of which one split is taken, or a
single `Dataset`), a folder of `<split>.jsonl` files, a JSONL file of rows, a Parquet file, or a
Hugging Face hub dataset id when no such local path exists (the data modules export the first). Every row is checked with `eval.rows.validate_row`; a bad row stops the
run with one line naming the file (and line) and the field.

Mixing: each source has a weight. With a total `size`, source i contributes
round(size * w_i / sum(w)) rows, drawn without replacement after a seeded shuffle and repeated
(whole shuffled passes) only when the source is smaller than its share. Without `size`, the mix is
the largest one with exactly these ratios that repeats no row. The result is shuffled with the
seed, so the same config always gives the same rows in the same order.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from eval.jsonl import InputError, numbered_records
from eval.paths import looks_local
from eval.rows import COLUMNS, RowError, validate_row
from eval.rows import lenient_meta
from eval.rows import meta as row_meta
from eval.rows import features as row_features


class DataError(ValueError):
    """Unusable training data; the message names the source and, for a bad row, the row."""


@dataclass(frozen=True)
class Source:
    path: str
    split: str = "train"
    weight: float = 1.0
    max_rows: int | None = None
    answer_types: list[str] | None = None  # keep only rows of these answer types
    meta: dict[str, list[Any]] | None = None  # keep only rows with one of these values per meta key


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        for lineno, row in numbered_records(path):
            try:
                validate_row(row, where=f"{path}: line {lineno}: ")
            except RowError as e:
                raise DataError(str(e)) from None
            rows.append({c: row[c] for c in COLUMNS})
    except InputError as e:
        raise DataError(str(e)) from None
    return rows


def load_source(src: Source):
    """One source as a `datasets.Dataset` with exactly the contract columns, validated."""
    from datasets import Dataset, DatasetDict, load_dataset, load_from_disk

    path = Path(src.path)
    if path.is_file() and path.suffix in (".jsonl", ".json"):
        rows = _read_jsonl(path)
        if not rows:
            raise DataError(f"{path}: no rows")
        return Dataset.from_list(rows, features=row_features())
    if path.is_file() and path.suffix == ".parquet":
        ds = Dataset.from_parquet(str(path))
    elif path.is_dir() and (path / f"{src.split}.jsonl").is_file() and not _saved_dataset(path):
        return load_source(Source(str(path / f"{src.split}.jsonl"), src.split, src.weight, src.max_rows))
    elif path.is_dir():
        if not _saved_dataset(path):
            raise DataError(f"{path}: neither a save_to_disk folder nor a folder with {src.split}.jsonl")
        loaded = load_from_disk(str(path))
        if isinstance(loaded, DatasetDict):
            if src.split not in loaded:
                raise DataError(f"{path}: no split {src.split!r} (has {', '.join(loaded)})")
            ds = loaded[src.split]
        else:
            ds = loaded
    elif path.exists():
        raise DataError(f"{path}: expected a .jsonl/.json/.parquet file or a save_to_disk folder")
    elif src.path.count("/") == 1 and not looks_local(src.path):  # a hub id: org/name
        try:  # a hub dataset id
            ds = load_dataset(src.path, split=src.split)
        except Exception as e:  # datasets raises many types (offline, missing, bad split)
            raise DataError(f"{path}: no such file or folder, and not loadable as a hub dataset "
                            f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    else:
        raise DataError(f"{path}: no such file or folder")
    missing = [c for c in COLUMNS if c not in ds.column_names]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)} of the row contract")
    ds = ds.select_columns(list(COLUMNS))
    for i, row in enumerate(ds):
        try:
            validate_row(row, where=f"{path} [{src.split}] #{i}: ")
        except RowError as e:
            raise DataError(str(e)) from None
    if len(ds) == 0:
        raise DataError(f"{path} [{src.split}]: no rows")
    return ds.cast(row_features())


def _saved_dataset(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()


def _take(ds, n: int, seed: int):
    """n rows of a shuffled `ds`, repeating whole shuffled passes when n > len(ds)."""
    from datasets import concatenate_datasets

    parts, left, k = [], n, 0
    while left > 0:
        shuffled = ds.shuffle(seed=seed + k)
        parts.append(shuffled.select(range(min(left, len(ds)))))
        left -= len(parts[-1])
        k += 1
    return parts[0] if len(parts) == 1 else concatenate_datasets(parts)


def mix(sources: Sequence[Source], *, size: int | None = None, seed: int = 0):
    """Load every source and mix them by weight (see the module docstring)."""
    from datasets import concatenate_datasets

    if not sources:
        raise DataError("no data sources given")
    for s in sources:
        if not s.weight > 0:
            raise DataError(f"{s.path}: weight must be > 0, got {s.weight}")
    loaded = []
    for s in sources:
        ds = load_source(s)
        if s.answer_types:
            keep = set(s.answer_types)
            ds = ds.filter(lambda r: r["answer_type"] in keep)
            if len(ds) == 0:
                raise DataError(f"{s.path} [{s.split}]: no rows of answer type(s) "
                                f"{', '.join(s.answer_types)}")
        if s.meta:
            def meta_matches(row, wanted=s.meta):
                meta = row_meta(row)
                return all(meta.get(key) in values for key, values in wanted.items())

            ds = ds.filter(meta_matches)
            if len(ds) == 0:
                wanted = "; ".join(f"{k} in {v}" for k, v in s.meta.items())
                raise DataError(f"{s.path} [{s.split}]: no rows whose meta has {wanted}")
        if s.max_rows is not None and s.max_rows < len(ds):
            ds = ds.shuffle(seed=seed).select(range(s.max_rows))
        loaded.append(ds)
    total_w = sum(s.weight for s in sources)
    shares = [s.weight / total_w for s in sources]
    if size is None:
        size = int(min(len(ds) / share for ds, share in zip(loaded, shares)))
    counts = _apportion(size, shares)
    parts = [_take(ds, n, seed + 1000 * i) for i, (ds, n) in enumerate(zip(loaded, counts)) if n > 0]
    return concatenate_datasets(parts).shuffle(seed=seed)


def _apportion(total: int, shares: Sequence[float]) -> list[int]:
    """Integer counts summing to `total`, proportional to `shares` (largest remainders)."""
    raw = [total * s for s in shares]
    counts = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - counts[i], reverse=True)
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def with_system_prompt(ds, system_prompt: str | None):
    """Replace (or insert) the system message of every prompt; None keeps the rows' own."""
    if system_prompt is None:
        return ds

    def fix(row):
        turns = [m for m in row["prompt"] if m["role"] != "system"]
        return {"prompt": [{"role": "system", "content": system_prompt}, *turns]}

    return ds.map(fix)


def drop_long_prompts(ds, tokenizer, max_tokens: int | None):
    """Drop rows whose templated prompt is longer than `max_tokens` (as verl's overlong-prompt
    filter does; TRL no longer truncates prompts). Returns (dataset, number dropped)."""
    if not max_tokens:
        return ds, 0

    def fits(row):
        ids = tokenizer.apply_chat_template(row["prompt"], tokenize=True, add_generation_prompt=True,
                                            return_dict=False)
        return len(ids) <= max_tokens

    kept = ds.filter(fits)
    return kept, len(ds) - len(kept)


def traced_rows(ds) -> int:
    """How many rows carry a reasoning trace in meta.reasoning (what sft.think: trace uses)."""
    def has(meta) -> bool:
        value = lenient_meta(meta).get("reasoning")
        return isinstance(value, str) and bool(value.strip())

    return sum(has(m) for m in ds["meta"])


def sft_examples(ds, *, target: str = "think_answer", think_fields: Iterable[str] | None = None,
                 think_default: str | None = None, think: str = "fields",
                 choice_answer: str = "letter"):
    """Prompt-completion examples for SFT: the row's prompt, and as completion the assistant reply
    `<think>...</think><answer>GOLD</answer>` (rl.targets) or only the gold answer. `think`
    picks the meta keys the think text may come from (sft.think in rl.config), `choice_answer`
    how a multiple-choice row answers (sft.choice_answer)."""
    from rl.targets import THINK_FIELDS, target_text

    if think == "trace":
        fields: tuple[str, ...] = ("reasoning",)  # where exploretom's export puts its trace
    elif think == "template":
        fields = ()
    elif think == "fields":
        fields = tuple(think_fields) if think_fields else THINK_FIELDS
    else:
        raise ValueError(f"think must be fields, trace or template, got {think!r}")

    def convert(row):
        reply = (target_text(row, fields, think_default, choice_answer)
                 if target == "think_answer"
                 else row["answer"])
        return {"prompt": row["prompt"], "completion": [{"role": "assistant", "content": reply}]}

    return ds.map(convert, remove_columns=[c for c in ds.column_names if c != "prompt"])
