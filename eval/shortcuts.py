"""What a reader who does not track minds would answer to a story's location question, and which
kind of question it is: the baselines a Theory-of-Mind score has to beat.

For one item of ToMi, Hi-ToM or our ExploreToM rows (a row or an `eval run` sample line), from the
item's own text (and, for our rows, the story structure in its meta):

- `candidates`: the containers the story names, in order of first mention (a reader rules out the
  options a story never names, so chance is one in their number);
- the shortcut answers: `last` (the container the story mentions last), `first` (the one it
  mentions first), `most_named` (the one it names most often, ties to the later mention) and
  `true_place` (where the asked object really is at the end: its last placement);
- `kind`: `true_belief` / `false_belief` (a belief question whose gold is / is not the object's
  true place), `reality` or `memory`, and `order` (0 for reality and memory).

ToMi's question types say the order (`first_order_*`, `second_order_*`) but not whether the belief
is false (a `_tom` question of a story in which nothing moved after the person left is a true
belief), so every benchmark's belief questions are classified the same way: the gold against the
true place the story gives. Our rows also carry `false_belief` in their meta; the two agree on
every row of the real recipe's export (docs/eval.md, "Shortcut baselines").
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from eval.benchmarks._common import LETTERS
from eval.rows import meta as meta_of

SHORTCUTS = ("last", "first", "most_named", "true_place")
KINDS = ("true_belief", "false_belief", "reality", "memory")
BENCHMARKS = ("tomi", "hitom", "exploretom")

# ToMi and Hi-ToM state where an object is ("The apple is in the red_box.") and move it ("Amelia
# moved the apple to the green_box."); what someone *tells* ("... told Emily that the onion is in
# the blue_bottle") is a claim, not a placement.
PLACED = re.compile(r"\bthe (\w+) is in the (\w+)", re.I)
MOVED = re.compile(r"\bmoved the (\w+) to the (\w+)", re.I)
TOLD = re.compile(r"\btold\b", re.I)
STORY = re.compile(r"Story:\n(.*?)\n\nQuestion: ", re.S)


@dataclass
class ShortcutItem:
    """One location question as the shortcut tables see it."""

    benchmark: str
    id: str
    kind: str
    order: int
    candidates: list[str]
    gold: str | None  # the gold as a place name
    answers: dict[str, str | None] = field(default_factory=dict)  # shortcut -> its answer

    @property
    def group(self) -> str:
        """The table row: `false belief, order 2`, `reality`, `memory`."""
        name = self.kind.replace("_", " ")
        return f"{name}, order {self.order}" if self.kind.endswith("belief") else name

    @property
    def chance(self) -> float:
        return 1 / len(self.candidates) if self.candidates else 0.0


def normalize(text: str) -> str:
    """Lower case, underscores as spaces, no leading article or trailing punctuation: `The
    red_box.` and `red box` are one place."""
    t = re.sub(r"\s+", " ", text.replace("_", " ").lower()).strip(" .,;:!?\"'`*")
    return t[4:] if t.startswith("the ") else t


def mentions(text: str, names: Sequence[str]) -> list[str]:
    """The names as the text mentions them, in order, each mention matched to the longest name
    that fits there (`key drawer` is not also a mention of `drawer`)."""
    by_norm = {normalize(n): n for n in names if normalize(n)}
    if not by_norm:
        return []
    longest_first = sorted(by_norm, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, longest_first)) + r")\b")
    return [by_norm[m.group(0)] for m in pattern.finditer(normalize_text(text))]


def normalize_text(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", " ").lower())


def shortcut_answers(story: str, candidates: Sequence[str],
                     true_place: str | None) -> dict[str, str | None]:
    """Each shortcut's answer on a story whose containers are `candidates`."""
    seen = mentions(story, candidates)
    counts = Counter(seen)
    last_at = {name: i for i, name in enumerate(seen)}
    most = max(counts, key=lambda n: (counts[n], last_at[n])) if counts else None
    return {"last": seen[-1] if seen else None, "first": seen[0] if seen else None,
            "most_named": most, "true_place": true_place}


def to_place(text: str | None, candidates: Sequence[str]) -> str | None:
    """The place an answer names: the candidate it is, else the one candidate it mentions (an
    option written as a sentence, "The apple is now in the box."), else its own normalized text
    (a place the story never names); None when there is no answer."""
    if not isinstance(text, str) or not normalize(text):
        return None
    norm = normalize(text)
    for c in candidates:
        if normalize(c) == norm:
            return c
    named = set(mentions(text, candidates))
    return named.pop() if len(named) == 1 else norm


def gold_of(row: dict[str, Any]) -> str | None:
    """The gold of a row (`answer`) or of a sample line (`gold`)."""
    return row["answer"] if "answer" in row else row.get("gold")


def choice_text(row: dict[str, Any], letter: str | None) -> str | None:
    """The text of the option a letter names."""
    choices = row.get("choices") or []
    if not isinstance(letter, str) or len(letter) != 1 or letter not in LETTERS[:len(choices)]:
        return None
    return choices[LETTERS.index(letter)]


def story_of(row: dict[str, Any]) -> str:
    """The story block of a row's last user turn (the loaders all write `Story:\\n...\\n\\n`)."""
    user = row["prompt"][-1]["content"]
    m = STORY.search(user)
    return m.group(1) if m else user


def question_of(row: dict[str, Any]) -> str:
    """The question line of the last user turn (`Question: ...`)."""
    user = row["prompt"][-1]["content"]
    m = re.search(r"^Question: (.*)$", user, re.M)
    return m.group(1).strip() if m else ""


def placements(story: str) -> list[tuple[str, str]]:
    """(object, container) for every placement in story order, claims left out."""
    out = []
    for line in story.splitlines():
        if TOLD.search(line):
            continue
        for m in sorted([*PLACED.finditer(line), *MOVED.finditer(line)], key=lambda m: m.start()):
            out.append((m.group(1), m.group(2)))
    return out


def asked_object(question: str, objects: Sequence[str]) -> str | None:
    """The object the question names (the last one it names, if several)."""
    found = [(m.start(), o) for o in set(objects)
             for m in re.finditer(rf"\bthe {re.escape(o)}\b", question, re.I)]
    return max(found)[1] if found else None


def _classified(benchmark: str, row: dict[str, Any], kind: str, order: int, gold: str | None,
                candidates: list[str], story: str, true_place: str | None) -> ShortcutItem:
    if kind == "belief":
        kind = "false_belief" if gold is None or gold != true_place else "true_belief"
    return ShortcutItem(benchmark, row["id"], kind, order, candidates, gold,
                        shortcut_answers(story, candidates, true_place))


def tomi_item(row: dict[str, Any]) -> ShortcutItem | None:
    m = meta_of(row)
    story = story_of(row)
    placed = placements(story)
    obj = asked_object(question_of(row), [o for o, _ in placed])
    candidates = list(dict.fromkeys(c for _, c in placed))
    if obj is None or not candidates:
        return None
    true_place = next((c for o, c in reversed(placed) if o == obj), None)
    qtype = m.get("question_type", "")
    if qtype in ("memory", "reality"):
        kind, order = qtype, 0
    elif qtype.startswith(("first_order", "second_order")):
        kind, order = "belief", 1 if qtype.startswith("first") else 2
    else:
        return None
    return _classified("tomi", row, kind, order, to_place(gold_of(row), candidates), candidates,
                       story, true_place)


def hitom_item(row: dict[str, Any]) -> ShortcutItem | None:
    m = meta_of(row)
    story = story_of(row)
    placed = placements(story)
    obj = asked_object(question_of(row), [o for o, _ in placed])
    # every option the story names: placements, claims and asides ("Owen likes the blue_bathtub")
    candidates = list(dict.fromkeys(mentions(story, row.get("choices") or [])))
    if obj is None or not candidates:
        return None
    true_place = next((c for o, c in reversed(placed) if o == obj), None)
    order = int(m.get("order", 0))
    gold = to_place(m.get("answer_text") or choice_text(row, gold_of(row)),
                    candidates)
    return _classified("hitom", row, "reality" if order == 0 else "belief", order, gold,
                       candidates, story, true_place)


EXPLORETOM_KINDS = {"ground_truth": "reality", "memory_beginning": "memory",
                    "memory_before": "memory", "belief": "belief"}


def exploretom_true_place(m: dict[str, Any]) -> str | None:
    """The container the object was last moved into, from the story structure; None when it
    was carried to another room after that (it then sits in no container the story names)."""
    place = None
    for a in (m.get("story") or {}).get("actions", []):
        if a.get("object") != m.get("thing"):
            continue
        if a.get("type") == "move_object_container":
            place = a.get("container")
        elif a.get("type") == "move_object_room":
            place = None
    return place


def exploretom_item(row: dict[str, Any]) -> ShortcutItem | None:
    """Our rows: container questions (the demo's and the benchmarks' kind); kind and order from
    the meta, the candidates the exporter listed."""
    m = meta_of(row)
    kind = EXPLORETOM_KINDS.get(m.get("kind", ""))
    candidates = list(m.get("candidates") or [])
    if m.get("property") != "container_location" or kind is None or not candidates:
        return None
    story = story_of(row)
    candidates = list(dict.fromkeys(mentions(story, candidates))) or candidates
    gold = gold_of(row)
    if row.get("answer_type") == "choice":  # the gold is a letter
        gold = choice_text(row, gold)
    return _classified("exploretom", row, kind, int(m.get("order", 0)),
                       to_place(gold, candidates), candidates, story, exploretom_true_place(m))


READERS = {"tomi": tomi_item, "hitom": hitom_item, "exploretom": exploretom_item}


def item(benchmark: str, row: dict[str, Any]) -> ShortcutItem | None:
    """The shortcut item of a row or sample line of `benchmark`; None for a benchmark without a
    reader here or a question about something else than a container."""
    reader = READERS.get(benchmark)
    return reader(row) if reader else None


def answered_place(line: dict[str, Any], candidates: Sequence[str]) -> str | None:
    """The place a sample line's reply names: the chosen option's text for multiple choice, the
    extracted answer otherwise."""
    if line.get("answer_type") == "choice":
        return to_place(choice_text(line, line.get("chosen")), candidates)
    return to_place(line.get("extracted"), candidates)
