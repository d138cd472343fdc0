"""Whether a reply's reasoning derives its answer: the `derived` check of ExploreToM rows.

A reply is derived when its answer is right (the outcome reward) and its think text is a
derivation that `exploretom.semantics.trace_check` accepts, full or short (`check_short_trace`:
the decisive steps only); for a full one: every step it names, who saw it, what
each mind
then holds, and its conclusion are what the story implies, no step that changes the asked fact
is missing, and the conclusion is the gold answer. Rows whose meta carries no story (ToM-Synth,
the authors' released data, other sources) have nothing to check against: None.

Two readers use it: `rl.trace_reward` (a GRPO reward) and `eval run`, which reports the share of
derived replies for the exploretom benchmark. eval imports none of the packages above it
(docs/DESIGN.md), so eval finds `derived` by name among the `tomrl.checks` entry points that
pyproject.toml declares (eval/checks.py).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from eval import answers
from eval.rows import lenient_meta
from exploretom.semantics.replay import Replay
from exploretom.semantics.story import parse_story
from exploretom.semantics.trace_check import TraceError, check_short_trace, check_trace

_CACHE_STORIES = 256  # a GRPO step's completions come from a few stories, 8 generations each


class Replays:
    """The checker's replay of each story, kept for the stories seen last."""

    def __init__(self) -> None:
        self._by_story: OrderedDict[tuple, Replay] = OrderedDict()

    def get(self, actions: list[dict[str, Any]], order: int) -> Replay:
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


def checked_derivation(text: str, gold: str, answer_type: str, meta: Any,
                       replays: Replays | None = None) -> float | None:
    """1.0 if `text` answers `gold` and its think text derives it under the checker, 0.0 if
    not, None when the row has no story to check against."""
    m = lenient_meta(meta)
    story = m.get("story")
    if not isinstance(story, dict) or not isinstance(story.get("actions"), list) or "order" not in m:
        return None
    think = answers.think_text(text)
    if think is None or answers.outcome_reward(text, gold, answer_type) != 1.0:
        return 0.0
    try:
        replay = (replays or Replays()).get(story["actions"], max(1, int(m["order"])))
        try:
            return float(check_trace(think, replay, m) == gold)
        except TraceError:  # a derivation may be full or short (the decisive steps only)
            return float(check_short_trace(think, replay, m) == gold)
    except TraceError:
        return 0.0
    except (KeyError, TypeError, ValueError):
        # a meta that is not an exported ExploreToM row's: nothing to check it against
        return None


_REPLAYS = Replays()  # one cache for the records of an `eval run` process


def derived(record: dict[str, Any]) -> bool | None:
    """The `tomrl.checks` entry point: whether a per-sample record of `eval run` (response, gold,
    answer_type, meta) is right with a checked derivation; None where its row has no story."""
    response = record.get("response")
    if not isinstance(response, str):
        return None
    ok = checked_derivation(response, str(record.get("gold", "")), str(record.get("answer_type")),
                            record.get("meta"), _REPLAYS)
    return None if ok is None else ok == 1.0
