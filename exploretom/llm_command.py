"""What the two LLM commands, `contexts` and `infill`, share when they run: the generator and
judge backends opened from the command line and closed whatever happens, the generation settings
of each, and messages that leave the progress bar intact."""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from tqdm.auto import tqdm

from eval.backends.base import Backend, GenerationConfig
from exploretom.llm_backend import backends_from_args, close_backends


@contextmanager
def opened_backends(args: argparse.Namespace) -> Iterator[tuple[Backend, Backend]]:
    """(generator, judge) of `backends_from_args`, closed on the way out."""
    generator, judge = backends_from_args(args)
    try:
        yield generator, judge
    finally:
        close_backends(generator, judge)


def generation_configs(args: argparse.Namespace) -> tuple[GenerationConfig, GenerationConfig]:
    """(generator, judge) settings: the generator's from the options; the judge answers a short
    JSON verdict, greedily."""
    generator = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                                 seed=args.seed)
    judge = GenerationConfig(max_new_tokens=256, temperature=0.0, seed=args.seed)
    return generator, judge


def message_log(quiet: bool) -> Callable[[str], None]:
    """Where a command's per-item messages go: nowhere with --quiet, else stderr."""
    return (lambda message: None) if quiet else _write


def _write(message: str) -> None:
    tqdm.write(message, file=sys.stderr)  # keeps the progress bar intact
