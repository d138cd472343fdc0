"""The checked-derivation reward for ExploreToM rows (`reward.trace_weight`).

1 when the completion's answer is right (the outcome reward) and its think text is a derivation
that `exploretom.trace_check` accepts (every step it names, who saw it, what each mind then
holds, and its conclusion are what the story implies, and no step that changes the asked fact
is missing) ending in that answer; 0 otherwise. Rows whose meta carries no story (ToM-Synth,
other sources) get None, which TRL leaves out of the sum for that row.

Why beside the outcome reward: a container question has two or three candidate answers, so a
policy that guesses is right half the time and the outcome reward pays the guess as much as the
reasoning. On the demo's test split the SFT model answered 60% of the container-belief questions
right but only 9% with a derivation the checker accepts (docs/experiments.md, 2026-11-25,
fourth session); this reward tells the two apart. It is not part of the ToM-Synth recipe (eq.
3-5), so it is off unless a config sets a weight.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Callable, Sequence

from eval import answers
from rl.completions import completion_text

_CACHE_STORIES = 256  # a step's completions come from a few stories, 8 generations each


class Replays:
    """The checker's replay of each story, kept for the stories seen last."""

    def __init__(self) -> None:
        self._by_story: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, actions: list[dict[str, Any]], order: int):
        from exploretom.story import parse_story
        from exploretom.trace_check import Replay

        key = (json.dumps(actions, sort_keys=True), order)
        replay = self._by_story.get(key)
        if replay is None:
            replay = Replay(parse_story({"id": 0, "actions": actions}).actions, order)
            self._by_story[key] = replay
            if len(self._by_story) > _CACHE_STORIES:
                self._by_story.popitem(last=False)
        else:
            self._by_story.move_to_end(key)
        return replay


def _meta(meta: Any) -> dict[str, Any] | None:
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            return None
    return meta if isinstance(meta, dict) else None


def checked_derivation(text: str, gold: str, answer_type: str, meta: Any,
                       replays: Replays | None = None) -> float | None:
    """1.0 if `text` answers `gold` and its think text derives it under the checker, 0.0 if
    not, None when the row has no story to check against."""
    from exploretom.trace_check import TraceError, check_trace

    m = _meta(meta)
    story = m.get("story") if m else None
    if not isinstance(story, dict) or not isinstance(story.get("actions"), list) or "order" not in m:
        return None
    think = answers.think_text(text)
    if think is None or answers.outcome_reward(text, gold, answer_type) != 1.0:
        return 0.0
    try:
        replay = (replays or Replays()).get(story["actions"], max(1, int(m["order"])))
        return float(check_trace(think, replay, m) == gold)
    except TraceError:
        return 0.0
    except (KeyError, TypeError, ValueError):
        # a meta that is not an exported ExploreToM row's: nothing to check it against
        return None


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
