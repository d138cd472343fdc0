"""What the two LLM commands, `contexts` and `infill`, share when they run: the generator and
judge backends opened from the command line and closed whatever happens, the generation settings
of each, and messages that leave the progress bar intact."""
from __future__ import annotations

import argparse
import socket
import sys
import urllib.parse
import urllib.request
from contextlib import contextmanager
from typing import Callable, Iterator

from tqdm.auto import tqdm

from eval.backends.base import Backend, GenerationConfig
from exploretom.llm.backend import backends_from_args, close_backends


@contextmanager
def opened_backends(args: argparse.Namespace) -> Iterator[tuple[Backend, Backend]]:
    """(generator, judge) of `backends_from_args`, closed on the way out."""
    generator, judge = backends_from_args(args)
    try:
        yield generator, judge
    finally:
        close_backends(generator, judge)


def check_reachable(*backends: Backend, timeout_s: float = 10.0) -> None:
    """ValueError (one line, in seconds) when the server of an HTTP backend accepts no
    connection, instead of every request failing after its retries (minutes). Only a TCP
    connection is opened: nothing is sent, so no key is. A proxy in the environment is left
    to the backend."""
    for b in backends:
        url = getattr(b, "base_url", None)
        if not url:
            continue
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        if urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
            continue
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            socket.create_connection((host, port), timeout=timeout_s).close()
        except (OSError, ValueError) as e:
            why = ("connection refused" if isinstance(e, ConnectionRefusedError) else
                   f"no answer in {timeout_s:g} s" if isinstance(e, TimeoutError) else
                   "unknown host" if isinstance(e, socket.gaierror) else
                   " ".join(str(e).split()) or type(e).__name__)
            raise ValueError(f"{b.name} backend: cannot reach {url} ({why}): is the server "
                             "running and --base-url right?") from None


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
