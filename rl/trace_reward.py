"""The checked-derivation reward for ExploreToM rows (`reward.trace_weight`).

1 when the completion's answer is right and its think text is a derivation that
`exploretom.semantics.trace_check` accepts, ending in that answer (`exploretom.semantics.derived`,
the same check
`eval run` reports as the exploretom benchmark's `derived` share); 0 otherwise. Rows whose meta
carries no story (ToM-Synth, other sources) get None, which TRL leaves out of the sum for that row.

Why beside the outcome reward: a container question has two or three candidate answers, so a
policy that guesses is right half the time and the outcome reward pays the guess as much as the
reasoning. On the demo's test split the SFT model answered 60% of the container-belief questions
right but only 9% with a derivation the checker accepts (docs/experiments.md, 2026-11-25,
fourth session); this reward tells the two apart. It is not part of the ToM-Synth recipe (eq.
3-5), so it is off unless a config sets a weight.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from exploretom.semantics.derived import Replays, checked_derivation
from rl.completions import completion_text


def trace_reward() -> Callable[..., list[float | None]]:
    """A TRL reward function scoring each completion's derivation (`checked_derivation`)."""
    replays = Replays()

    def checked_trace(prompts: Sequence[Any], completions: Sequence[Any], answer: Sequence[str],
                      answer_type: Sequence[str], meta: Sequence[Any] | None = None,
                      **kwargs: Any) -> list[float | None]:
        if meta is None:
            return [None] * len(completions)
        return [checked_derivation(completion_text(c), answer[i], answer_type[i], meta[i], replays)
                for i, c in enumerate(completions)]

    return checked_trace
