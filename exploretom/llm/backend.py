"""Command-line options for the model (and judge) behind `contexts` and `infill`.

Both commands ask a generator model and a judge model through the project's backends
(`eval.backends.load_backend`); by default the judge is the generator. Options follow
`python -m eval run`: `--backend`, `--model`, `-O KEY=VALUE` for any backend constructor option
(`concurrency=64`, `api_key_env=MY_KEY`, `batch_size=8` for hf), plus shortcuts for the common
`--base-url` and `--cache`. API keys only ever come from environment variables (the HTTP
backends read `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` or the variable `api_key_env` names).
"""
from __future__ import annotations

import argparse
from typing import Any

from eval.backends import (BACKENDS, Backend, BackendError, accepted_options, backend_class,
                           load_backend)
from eval.cli_common import add_model_arguments, parse_pairs


def add_backend_arguments(parser: argparse.ArgumentParser, *, temperature: float,
                          max_new_tokens: int) -> None:
    g = add_model_arguments(parser, backend="openai", choices=True, title="generator model",
                            generation=("temperature", "max_new_tokens"),
                            defaults={"temperature": temperature, "max_new_tokens": max_new_tokens})
    # shortcuts of two options of the HTTP backends (-O base_url=..., -O cache=...)
    g.add_argument("--base-url", help="endpoint of an HTTP backend, e.g. http://localhost:8000/v1")
    g.add_argument("--cache", help="SQLite response cache of the HTTP backends (makes re-runs free)")
    j = parser.add_argument_group("judge model (default: the generator)")
    j.add_argument("--judge-backend", choices=list(BACKENDS),
                   help="the judge's backend (default: the generator's)")
    j.add_argument("--judge-model", help="the judge's model (default: the generator's)")
    j.add_argument("--judge-base-url", help="the judge's endpoint (default: the generator's, "
                   "when the backends are of one kind)")
    j.add_argument("--judge-option", action="append", metavar="KEY=VALUE",
                   help="judge backend option (default: the generator's -O options)")


def _options(kind: str, base_url: str | None, cache: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    options = dict(extra)
    if base_url:
        options["base_url"] = base_url
    # the backends with a response cache say so by taking the option
    if cache and "cache" in (accepted_options(backend_class(kind)) or ()):
        options.setdefault("cache", cache)
    return options


def _load(kind: str, model: str, options: dict[str, Any], what: str) -> Backend:
    try:
        return load_backend(kind, model, **options)
    except (BackendError, ValueError) as e:  # BackendConfigError is a ValueError
        raise ValueError(f"{what}: {e}") from None
    except TypeError as e:  # an option the backend's constructor does not take
        raise ValueError(f"{what} ({kind}): bad option ({e})") from None


def backends_from_args(args: argparse.Namespace) -> tuple[Backend, Backend]:
    """(generator, judge); the same object when no judge option differs from the generator."""
    gen_extra = parse_pairs(args.backend_option, "--backend-option")
    generator = _load(args.backend, args.model, _options(args.backend, args.base_url, args.cache,
                                                         gen_extra), "generator backend")
    if not (args.judge_backend or args.judge_model or args.judge_base_url or args.judge_option):
        return generator, generator
    kind = args.judge_backend or args.backend
    extra = parse_pairs(args.judge_option, "--judge-option") if args.judge_option else gen_extra
    base_url = args.judge_base_url or (args.base_url if kind == args.backend else None)
    judge = _load(kind, args.judge_model or args.model, _options(kind, base_url, args.cache, extra),
                  "judge backend")
    return generator, judge


def close_backends(*backends: Backend) -> None:
    seen: set[int] = set()
    for b in backends:
        if id(b) not in seen:
            seen.add(id(b))
            b.close()
