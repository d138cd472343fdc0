"""Rows in the contract of docs/DESIGN.md from the selected questions: the prompt (story, question
and a request for a short answer), the meta, the reasoning trace, and the `Dataset` streamed to
Arrow from them."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Iterator, Sequence

from eval.benchmarks._common import LETTERS
from eval.benchmarks.exploretom import choice_prompt, user_prompt
from eval.jsonl import InputError
from eval.rows import features as row_features
from eval.rows import make_row
from exploretom.datasets.draws import in_share, stable_hash
from exploretom.datasets.stories import Item, StoryIn
from exploretom.semantics.story import parse_story
from exploretom.semantics.trace import StoryTracer

SOURCE = "exploretom"


def as_choice(it: Item, share: float, seed: int, max_options: int = 0,
              distractors: Sequence[str] = ()) -> list[str] | None:
    """The options of a location question asked as multiple choice, for a seeded `share` of the
    questions that have two or more candidates: the story's containers (or rooms), and when
    `max_options` exceeds their number, a seeded number of others up to it drawn from
    `distractors` (places of other stories, which a reader rules out because the story never
    names them: Hi-ToM lists fifteen containers for a story that uses four), in a seeded order."""
    if share <= 0 or len(it.candidates) < 2:
        return None
    key = stable_hash(seed, "choice", it.story.id, it.index)
    if not in_share(key, share):
        return None
    rng = random.Random(key)
    options = list(it.candidates)
    pool = sorted(set(distractors) - set(options))
    if max_options > len(options) and pool:
        extra = rng.randint(0, min(max_options - len(options), len(pool)))
        options += rng.sample(pool, extra)
    rng.shuffle(options)
    return options[:len(LETTERS)]


def as_sentences(q: dict[str, Any], options: Sequence[str]) -> list[str]:
    """The options of a location question as sentences that each state one answer, as BigToM
    and ToMATO list theirs: "Ruth thinks that Miriam will search for the phone in the bag."."""
    thing = q["thing"]
    people = list(q.get("people") or [])
    if q.get("kind") == "belief" and people:
        chain = "".join(f"{p} thinks that " for p in people[:-1])
        return [f"{chain}{people[-1]} will search for the {thing} in the {o}." for o in options]
    if q.get("kind") == "ground_truth":
        return [f"The {thing} is now in the {o}." for o in options]
    return [f"The {thing} was in the {o}." for o in options]


def in_sentences(it: Item, share: float, seed: int) -> bool:
    """Whether a multiple-choice question lists its options as sentences (a seeded `share`)."""
    return share > 0 and in_share(stable_hash(seed, "sentences", it.story.id, it.index), share)


def distractor_pools(items: Sequence[Item]) -> dict[str, list[str]]:
    """Every candidate of the items' stories per property: where distractor options come from."""
    pools: dict[str, set[str]] = {}
    for it in items:
        pools.setdefault(it.q["property"], set()).update(it.candidates)
    return {k: sorted(v) for k, v in pools.items()}


def row_meta(it: Item) -> dict[str, Any]:
    q = it.q
    return {"story_id": it.story.id, "question_index": it.index,
            **{k: q.get(k) for k in ("order", "kind", "property", "people", "thing",
                                     "state_value", "before_action", "interesting",
                                     "false_belief")},
            **it.story.info}


def story_tracer(story: StoryIn, room_steps: bool = False, short: bool = False) -> StoryTracer:
    """The tracker's replay of a story, to the order it was labelled at (an order-1 belief can
    depend on it: what a receiver knows of the speaker's belief decides which message wins)."""
    actions = parse_story({"id": story.id, "actions": story.info["story"]["actions"]}).actions
    return StoryTracer(actions, story.max_order, room_steps, short)


def add_reasoning(items: Sequence[Item], room_steps: bool = False, short: bool = False) -> None:
    """Each item's trace (exploretom.semantics.trace; with `room_steps`, naming where the
    question's people enter and leave; `short`, the decisive steps only). A stored answer the
    tracker no longer derives is an error: the file was labelled by another version of the
    tracker."""
    tracers: dict[str, StoryTracer] = {}
    for it in items:
        tracer = tracers.get(it.story.id)
        if tracer is None:
            if len(tracers) >= 256:  # items mostly come grouped by story
                tracers.clear()
            tracer = tracers[it.story.id] = story_tracer(it.story, room_steps, short)
        got = tracer.answer(it.q)
        if got != it.q["answer"]:
            raise InputError(f"story {it.story.id!r}: questions[{it.index}] "
                             f"({it.q['question']!r}): the file says {it.q['answer']!r}, the "
                             f"tracker now derives {got!r} (relabel the stories: python -m "
                             f"exploretom label)")
        it.reasoning = tracer.trace(it.q)
        t = tracer.tracker
        it.candidates = {"container_location": sorted(t.container_room),
                         "room_location": t.rooms()}.get(it.q["property"], [])


def make_rows(items: Sequence[Item], choice_share: float = 0.0, seed: int = 0,
              max_options: int = 0, pools: dict[str, list[str]] | None = None,
              sentence_share: float = 0.0) -> Iterator[dict[str, Any]]:
    """One contract row per item; a seeded `choice_share` of the location questions with two or
    more candidates are asked as multiple choice (answer: the letter), with up to `max_options`
    options drawn from `pools` (see `as_choice`), a seeded `sentence_share` of them with the
    options written as sentences (`as_sentences`)."""
    for it in items:
        meta = {**row_meta(it), "reasoning": it.reasoning}
        if it.candidates:
            meta["candidates"] = it.candidates
        options = as_choice(it, choice_share, seed, max_options,
                            (pools or {}).get(it.q["property"], ()))
        if options is None:
            yield make_row(id=f"{it.story.id}-q{it.index}", source=SOURCE,
                           user=user_prompt(it.story.text, it.q), answer=it.q["answer"],
                           answer_type=it.q["answer_type"], meta=meta)
        else:
            answer = LETTERS[options.index(it.q["answer"])]
            if in_sentences(it, sentence_share, seed):
                options = as_sentences(it.q, options)
            yield make_row(id=f"{it.story.id}-q{it.index}", source=SOURCE,
                           user=choice_prompt(it.story.text, it.q, options),
                           answer=answer, answer_type="choice", choices=options, meta=meta)


def build_dataset(items: Sequence[Item], cache_dir: Path, fingerprint: str,
                  choice_share: float = 0.0, seed: int = 0, max_options: int = 0,
                  pools: dict[str, list[str]] | None = None, sentence_share: float = 0.0):
    """A `Dataset` of the items' rows, streamed to Arrow files under `cache_dir` (rows repeat
    their story's structure, so holding them all in memory does not scale)."""
    from datasets import Dataset

    features = row_features()
    if not items:  # a split too small to get a story; from_generator refuses to build it
        return Dataset.from_dict({name: [] for name in features}, features=features)
    return Dataset.from_generator(make_rows, features=features, cache_dir=str(cache_dir),
                                  gen_kwargs={"items": items, "choice_share": choice_share,
                                              "seed": seed, "max_options": max_options,
                                              "pools": pools, "sentence_share": sentence_share},
                                  fingerprint=fingerprint)
