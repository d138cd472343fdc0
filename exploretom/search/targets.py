"""Target models for the search: who answers the questions, and how answers are scored.

A target answers a whole batch of (story, question) items in one call: the search sends all
questions of all candidate nodes it is scoring at once. `ModelTarget` asks any `eval` backend
(hf, vllm, openai, anthropic, served); `ReasonerTarget` asks a scripted reasoner; `NoisyTarget` is the
labels with seeded errors (a target whose mistakes vary from story to story, as a model's do).

A request that fails for good (after the backend's own retries) is not an answer: `ModelTarget`
raises `TargetError`, and the search leaves that story unwritten for a re-run instead of scoring
an empty reply as wrong (a failing endpoint must never make stories look hard).

Scoring modes: `strict` (default) extracts the answer with the project's one answer parser and
compares it after normalisation, so an answer naming several candidates is wrong; `lenient`
is the paper's public code: the expected answer is a substring of the reply (so "no" matches
"know"), kept to compare figures with the paper.
"""
from __future__ import annotations

import abc
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from exploretom.search.reasoners import REASONERS, get_reasoner
from exploretom.semantics.questions import KNOWS, NOT_KNOWS, ROOM
from exploretom.semantics.tracker import Tracker

SCORING_MODES = ("strict", "lenient")

SYSTEM_PROMPT = (
    "You read short stories about people moving objects, changing them and talking to each "
    "other, and answer questions about what happened and about what each person believes. "
    "Answer with a short answer only: a room or container name, yes or no, or the phrase the "
    "question offers."
)


@dataclass(frozen=True)
class Item:
    """One question about one story, as the target sees it."""

    tracker: Tracker
    text: str  # the story as the target reads it
    question: dict[str, Any]


def user_prompt(text: str, question: str) -> str:
    return f"Story:\n{text}\n\nQuestion: {question}\nShort answer:"


def candidates(t: Tracker | None) -> list[str]:
    """The places and containers of a story: what an untagged answer to its location questions
    is read against ("Anne will look in the red_box." names the one container red_box)."""
    return [] if t is None else [*t.rooms(), *sorted(t.container_room)]


def judge(response: str, question: dict[str, Any], mode: str = "strict",
          tracker: Tracker | None = None) -> tuple[bool, str]:
    """Whether a response answers the question right, and how its answer was read (the eval
    reader's "tag", "fallback" or "none": a reply nobody could read is counted apart from a
    wrong one). `lenient` is the paper's substring rule for the verdict."""
    from eval.answers import score

    verdict = score(response, question["answer"], question["answer_type"],
                    candidates=candidates(tracker))
    if mode == "lenient":
        return question["answer"].lower() in response.lower(), verdict.read
    return verdict.correct, verdict.read


def is_correct(response: str, question: dict[str, Any], mode: str = "strict",
               tracker: Tracker | None = None) -> bool:
    return judge(response, question, mode, tracker)[0]


class TargetError(RuntimeError):
    """Requests to the target failed for good: no answers, so nothing may be scored."""

    def __init__(self, failed: int, total: int, first: str) -> None:
        super().__init__(f"{failed} of {total} requests to the target failed ({first[:300]})")
        self.failed = failed


class Target(abc.ABC):
    name: str = "target"

    @abc.abstractmethod
    def answer(self, items: Sequence[Item]) -> list[str]:
        """One response per item, in order (a single batch); TargetError if any failed."""

    def fresh(self, round_: int) -> "Target":
        """The target asked again, independently of earlier answers (round_ >= 1): selected
        stories are re-scored on fresh answers, since the answers they were selected on are
        biased towards mistakes. Deterministic targets answer the same."""
        return self

    def close(self) -> None:
        """Free what the target holds (a model, a server it started)."""

    def __enter__(self) -> "Target":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReasonerTarget(Target):
    def __init__(self, reasoner: str) -> None:
        self.fn = get_reasoner(reasoner)
        self.name = f"reasoner:{reasoner}"

    def answer(self, items: Sequence[Item]) -> list[str]:
        return [self.fn(it.tracker, it.question) for it in items]

    def answer_items(self, tracker: Tracker, questions: Sequence[dict[str, Any]]) -> list[str]:
        """Answers to questions about one tracked story (no rendering needed)."""
        return [self.fn(tracker, q) for q in questions]


class NoisyTarget(Target):
    """The labels, wrong with probability `p_false_belief` on false-belief questions and `p_other`
    on the rest. Each error is a seeded coin of (seed, round, story text, question), so a story
    always gets the same answers in one round (runs are reproducible and resumable) while a
    prefix and its continuations are independent draws, and `fresh` draws anew."""

    def __init__(self, p_false_belief: float, p_other: float, seed: int = 0,
                 round_: int = 0) -> None:
        for p in (p_false_belief, p_other):
            if not 0 <= p <= 1:
                raise ValueError(f"noisy target: error rates must lie in [0, 1], got {p}")
        self.p, self.q, self.seed, self.round = p_false_belief, p_other, seed, round_
        self.name = f"noisy:{p_false_belief:g},{p_other:g}"

    def fresh(self, round_: int) -> "NoisyTarget":
        return NoisyTarget(self.p, self.q, self.seed, round_)

    def answer(self, items: Sequence[Item]) -> list[str]:
        out = []
        for it in items:
            q = it.question
            key = f"{self.seed}:{self.round}:{it.text}\x00{q['question']}".encode()
            u = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2 ** 64
            wrong = u < (self.p if q.get("false_belief") else self.q)
            out.append(wrong_answer(it.tracker, q) if wrong else q["answer"])
        return out


def wrong_answer(t: Tracker, q: dict[str, Any]) -> str:
    """A plausible answer to `q` that is not the right one (the first other candidate)."""
    gold = q["answer"]
    if q["answer_type"] == "yes_no":
        return "no" if gold == "yes" else "yes"
    if q["answer_type"] == "knowledge":
        return NOT_KNOWS if gold == KNOWS else KNOWS
    pool = t.rooms() if q.get("property") == ROOM else sorted(t.container_room)
    return next((x for x in pool if x != gold), "I do not know")


PROMPTS = ("paper", "row")
# what a model target is asked with: greedy, short answers (a spec may set the token limit)
TARGET_GENERATION = {"max_new_tokens": 32, "temperature": 0.0}


class ModelTarget(Target):
    """Any `eval` backend; greedy, short answers (`generation`: the settings, of which a target
    spec sets the token limit). `prompt`: `paper` (the paper's: a short-answer system prompt, the
    story, the question) or `row` (the project's row contract, exactly what `export` writes and
    the project's own models are trained and evaluated on)."""

    def __init__(self, backend: Any, generation: Any = None, prompt: str = "paper") -> None:
        from eval.backends import GenerationConfig

        if prompt not in PROMPTS:
            raise ValueError(f"target prompt must be one of {', '.join(PROMPTS)}, got {prompt!r}")
        self.backend, self.prompt = backend, prompt
        self.config = generation or GenerationConfig(**TARGET_GENERATION)
        self.name = f"{backend.name}:{backend.model}"
        # why answers ended, over the target's life: a cut-off or refusing answer is still
        # read (it may name a place), but a run says how many there were
        self.answers = 0
        self.ended: Counter = Counter()

    def conversation(self, it: Item) -> list[dict[str, str]]:
        if self.prompt == "row":
            from eval.rows import SYSTEM_PROMPT as ROW_SYSTEM
            from eval.benchmarks.exploretom import user_prompt as row_user_prompt

            return [{"role": "system", "content": ROW_SYSTEM},
                    {"role": "user", "content": row_user_prompt(it.text, it.question)}]
        return [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user_prompt(it.text, it.question["question"])}]

    def answer(self, items: Sequence[Item]) -> list[str]:
        from eval.replies import problem

        completions = self.backend.generate([self.conversation(it) for it in items], self.config)
        failed = [c for c in completions if not c.ok]
        if failed:
            raise TargetError(len(failed), len(items), str(failed[0].error))
        self.answers += len(completions)
        self.ended.update(p for p in map(problem, completions) if p)
        return [c.text for c in completions]

    def close(self) -> None:
        self.backend.close()


def make_target(spec: dict[str, Any]) -> Target:
    """From a config mapping: {kind: reasoner, name: world}, {kind: noisy, p: 0.5, q: 0.1,
    seed: 0} or {kind: openai | hf | served | ..., model: ..., max_new_tokens, prompt: paper |
    row, <backend options>}."""
    spec = dict(spec)
    kind = spec.pop("kind", "reasoner")
    if kind == "reasoner":
        return ReasonerTarget(spec.get("name", "world"))
    if kind == "noisy":
        return NoisyTarget(float(spec.get("p", 0.5)), float(spec.get("q", 0.1)),
                           int(spec.get("seed", 0)))
    from eval.backends import GenerationConfig, load_backend

    model = spec.pop("model", None)
    if not model:
        raise ValueError(f"target of kind {kind!r} needs a 'model'")
    generation = dict(TARGET_GENERATION)
    if "max_new_tokens" in spec:
        generation["max_new_tokens"] = spec.pop("max_new_tokens")
    prompt = spec.pop("prompt", "paper")
    if kind == "served":  # the server as a target's is best run, unless the spec says
        from eval.backends.vllm_server import serve_flags

        spec.setdefault("server_args", serve_flags(VLLM_TARGET))
    return ModelTarget(load_backend(kind, model, **spec), GenerationConfig(**generation), prompt)


LOCAL_KINDS = ("hf", "vllm", "served")  # the backends a local model folder is asked through
TARGET_FORMS = ("a reasoner (" + "|".join(REASONERS) + "), noisy:P,Q, or a local model folder "
                "as PATH (the fastest backend here), hf:PATH, vllm:PATH or served:PATH")
# A local model through vLLM, in process or served: float32 as transformers runs it on CPU (the
# same greedy answers), room for the longest story, and the shared system prompt and story of a
# node's questions computed once
VLLM_TARGET = {"dtype": "float32", "max_model_len": 4096, "enable_prefix_caching": True}
# a local model's answers to the search's questions are a word or two
LOCAL_GENERATION = {"max_new_tokens": 24}


def fastest_local_backend() -> str:
    """The backend a bare model folder is asked through: vLLM in this process where it is
    installed (for SmolLM2-135M on 2 CPU cores, 6.6 questions/s against the hf backend's 2.4,
    the same answers; docs/exploretom-search.md), else transformers."""
    import importlib.util
    import sys

    if importlib.util.find_spec("vllm") is not None:
        return "vllm"
    print("note: vLLM is not installed here, so the model is asked through transformers (hf), "
          "about 2.7x slower than vLLM for a 135M model on CPU; .venv-vllm has vLLM "
          "(make setup-vllm)", file=sys.stderr)
    return "hf"


def check_target(text: str, spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` (of `--target text`), once its model folder is known to hold a model: a missing
    folder, or one without config.json, is one line before anything loads, and a target of
    vLLM where vLLM is not installed says which environment has it."""
    import importlib.util

    from eval.paths import missing_local_model

    if spec.get("kind") in LOCAL_KINDS:
        problem = missing_local_model(str(spec["model"]))
        if problem:
            raise ValueError(f"--target {text}: model {spec['model']}: {problem}")
    if spec.get("kind") == "vllm" and importlib.util.find_spec("vllm") is None:
        raise ValueError(f"--target {text}: vLLM is not installed in this environment; run "
                         "with .venv-vllm/bin/python (make setup-vllm builds it), or use "
                         "hf:PATH or served:PATH")
    return spec


def parse_target(text: str, seed: int = 0, batch_size: int = 64, prompt: str = "row") -> dict[str, Any]:
    """`--target` of bench-search as a make_target spec: a reasoner name, `noisy:P,Q` (wrong
    with probability P on false-belief questions, Q on the others) or a local model folder,
    greedy, asked with `prompt` (`row`: the prompt the project's models are trained on; `paper`:
    the paper's short-answer prompt) through one of three backends (a bare PATH: the fastest one
    installed, `fastest_local_backend`):
    - `hf:PATH`, transformers in this process. The hf backend prefills what the questions of one
      story share (system prompt and story) once per story (`share_prefixes`: the same greedy
      answers); with it batches of 64 were faster on CPU than 256
      (docs/exploretom-search.md, "Throughput of the neural target").
    - `vllm:PATH`, vLLM's offline engine in this process (an environment with vLLM).
    - `served:PATH`, `vllm serve` started on localhost for the run and asked over HTTP (vLLM from
      this environment or .venv-vllm), as a user's own served model would be.
    Which is fastest for a small model on CPU is measured in docs/exploretom-search.md."""
    if prompt not in PROMPTS:
        raise ValueError(f"target prompt must be one of {', '.join(PROMPTS)}, got {prompt!r}")
    kind, sep, rest = text.partition(":")
    if not sep and kind in REASONERS:
        return {"kind": "reasoner", "name": kind}
    if (Path(text) / "config.json").is_file():
        return parse_target(f"{fastest_local_backend()}:{text}", seed, batch_size, prompt)
    if kind == "noisy" and sep:
        try:
            p, q = (float(x) for x in rest.split(","))
        except ValueError:
            raise ValueError(f"--target {text!r}: write noisy:P,Q, e.g. noisy:0.5,0.1") from None
        if not (0 <= p <= 1 and 0 <= q <= 1):
            raise ValueError(f"--target {text!r}: P and Q must lie in [0, 1]")
        return {"kind": "noisy", "p": p, "q": q, "seed": seed}
    if kind == "hf" and rest:
        return {"kind": "hf", "model": rest, "prompt": prompt, "batch_size": batch_size,
                "share_prefixes": True, **LOCAL_GENERATION}
    if kind == "vllm" and rest:
        return {"kind": "vllm", "model": rest, "prompt": prompt, **LOCAL_GENERATION, **VLLM_TARGET}
    if kind == "served" and rest:
        return {"kind": "served", "model": rest, "prompt": prompt, **LOCAL_GENERATION,
                "concurrency": 64}
    raise ValueError(f"--target {text!r}: expected {TARGET_FORMS}")
