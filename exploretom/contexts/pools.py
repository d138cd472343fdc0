"""The first names and settings a context is seeded from: the offline lexicon's, or asked from the
model once and kept beside the output, so a re-run asks the same prompts."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eval.backends.base import Backend, GenerationConfig
from eval.jsonl import InputError, write_text_atomic
from exploretom.contexts.prompts import names_prompt, settings_prompt
from exploretom.contexts.validation import ARTICLES, is_name
from exploretom.llm.json import ReplyError, completion_text, one_line, parse_string_list
from exploretom.sampling.lexicon import load_lexicon


@dataclass
class Pools:
    names: list[str]
    settings: list[str]
    source: str  # "lexicon" or the model that wrote them


def _setting_phrase(text: str) -> str:
    text = one_line(text).strip(" .,;:")
    if not text:
        return ""
    text = text[:1].lower() + text[1:]
    if not text.startswith(ARTICLES):
        text = ("an " if text[0] in "aeiou" else "a ") + text
    return text


def lexicon_pools() -> Pools:
    lex = load_lexicon()
    return Pools(list(lex["names"]), [s["description"] for s in lex["settings"]], "lexicon")


def llm_pools(backend: Backend, size: int, config: GenerationConfig) -> Pools:
    """Names and settings asked from the model once (both requests in one batch)."""
    names_c, settings_c = backend.generate([names_prompt(size), settings_prompt(size)], config)
    try:
        raw_names = parse_string_list(completion_text(names_c))
        raw_settings = parse_string_list(completion_text(settings_c))
    except ReplyError as e:
        raise ValueError(f"the model's list of names or settings is unusable ({e})") from None
    names = list(dict.fromkeys(n.strip() for n in raw_names if is_name(n.strip())))
    settings = list(dict.fromkeys(s for s in map(_setting_phrase, raw_settings)
                                  if s and len(s) <= 80 and "\n" not in s))
    if len(names) < 10 or not settings:
        raise ValueError(f"the model gave {len(names)} usable names and {len(settings)} "
                         "settings; need at least 10 names and 1 setting")
    return Pools(names, settings, backend.model)


def load_or_make_pools(kind: str, path: Path, backend: Backend, size: int,
                       config: GenerationConfig) -> Pools:
    if kind == "lexicon":
        return lexicon_pools()
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Pools(list(data["names"]), list(data["settings"]), data["source"])
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{path}: not a pools file written by this command; delete it to "
                             "ask the model again") from None
    pools = llm_pools(backend, size, config)
    # atomic: a killed run leaves the old file or the whole new one
    write_text_atomic(path, json.dumps(pools.__dict__, ensure_ascii=False, indent=1))
    return pools


def pools_path(output: str | Path) -> Path:
    return Path(str(output) + ".pools.json")
