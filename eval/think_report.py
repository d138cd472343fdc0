"""What a model's thinks hold: collapse, loops, and whether their presence claims are true.

A model trained to think before it answers can score while its thinking has collapsed (empty or
the same text for every item) or loops until the token limit. And a think written in our traces'
grammar ("Step 4: Jayden moved the banana to the green_bathtub. Hunter was elsewhere.") makes
claims that can be checked against a ToMi story: who was in the room at that line. This report
reads `eval run` outputs and says, per run and benchmark:

- `think`: the share of replies with a non-empty think; `empty`: with an empty or no think;
  `repeated`: thinks that are word for word another item's (templated thinking; the same item in
  another option order does not count); `unclosed`:
  replies whose think or answer is never closed (cut at the token limit, a loop);
- accuracy of the replies with a think and of those without;
- on ToMi, the think's presence claims: each `Step N: <sentence>. <person> <part>, ...` line whose
  sentence is one of the story's (a move, a stated placement, an entry or an exit; the step
  number is not trusted, the sentence is looked up), each part (`did it`, `came in`, `left`, `saw
  it`, `was elsewhere`) compared with where everyone was at that line (presence: the actor's own
  part is right under any of the first three); reported as the share of
  claims that are right, per part claimed, and the shares of step lines whose sentence is not in
  the story (made up) or is a story line that is no event (noise: "Ella hates the garden").

    python -m eval.think_report runs/e4-stated/eval/stated runs/e6-rooms-bal/eval/roomsbal
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from eval.answers import think_text
from eval.jsonl import InputError
from eval.results import read_samples
from eval.shortcuts import story_of

STEP = re.compile(r"^Step \d+: (.+?)\. (.+?)\.?$")
ENTERED = re.compile(r"(\w+) entered the (\w+)$")
EXITED = re.compile(r"(\w+) (?:exited|left) the (\w+)$")
MOVED = re.compile(r"(\w+) moved the (\w+) to the (\w+)$")
PLACED = re.compile(r"the (\w+) is in the (\w+)$", re.I)
PARTS = ("did it", "came in", "left", "saw it", "was elsewhere")
PART = re.compile(r"^(\w+) (" + "|".join(PARTS) + r")$")


def story_events(story: str) -> list[tuple[str, str, dict[str, str | None]]]:
    """(sentence key, actor or "", everyone's room before the line) for each line of a ToMi
    story. A stated placement has no actor; its room is the one most people present are in."""
    room: dict[str, str | None] = {}
    out = []
    for line in story.split("\n"):
        text = line.strip().rstrip(".")
        before = dict(room)
        if m := ENTERED.fullmatch(text):
            out.append((f"enter {m[1]} {m[2]}", m[1], before))
            room[m[1]] = m[2]
        elif m := EXITED.fullmatch(text):
            out.append((f"exit {m[1]} {m[2]}", m[1], before))
            room[m[1]] = None
        elif m := MOVED.fullmatch(text):
            out.append((f"move {m[2]} {m[3]}|{m[1]}", m[1], before))
        elif m := PLACED.fullmatch(text):
            out.append((f"place {m[1].lower()} {m[2]}", "", before))
    return out


def sentence_key(text: str) -> str | None:
    """The story-event key of a think step's sentence (None: not a sentence ToMi writes)."""
    if m := ENTERED.fullmatch(text):
        return f"enter {m[1]} {m[2]}"
    if m := EXITED.fullmatch(text):
        return f"exit {m[1]} {m[2]}"
    if m := MOVED.fullmatch(text):
        return f"move {m[2]} {m[3]}|{m[1]}"
    if m := PLACED.fullmatch(text):
        return f"place {m[1].lower()} {m[2]}"
    return None


def event_room(key: str, actor: str, before: dict[str, str | None]) -> str | None:
    """The room an event happens in: the actor's (an entry: the room entered), or for a stated
    placement the room most people are in."""
    if key.startswith("enter "):
        return key.split()[2]
    if actor:
        return before.get(actor)
    rooms = Counter(r for r in before.values() if r is not None)
    return rooms.most_common(1)[0][0] if rooms else None


def part_is_right(part: str, key: str, actor: str, before: dict[str, str | None],
                  person: str) -> bool:
    """Whether `person` took `part` in the event. What is checked is presence: an actor's own
    part is right as "did it", "came in" or "left" alike."""
    if person == actor:
        return part in ("did it", "came in", "left")
    room = event_room(key, actor, before)
    return part == ("saw it" if room is not None and before.get(person) == room
                    else "was elsewhere")


def presence_claims(think: str, story: str) -> tuple[list[tuple[str, bool]], int, int, int]:
    """([(part claimed, right?)], step lines, step lines whose sentence is not the story's,
    step lines whose sentence is a story line but no event: "Ella hates the garden")."""
    events = story_events(story)
    lines = {line.strip().rstrip(".").lower() for line in story.split("\n")}
    claims, steps, made_up, noise, at = [], 0, 0, 0, 0
    for line in think.split("\n"):
        m = STEP.match(line.strip())
        if m is None:
            continue
        steps += 1
        key = sentence_key(m[1])
        # the first matching line at or after the last one matched: a think retells in order
        found = next((k for k in range(at, len(events)) if events[k][0] == key), None)
        if found is None:
            found = next((k for k in range(len(events)) if events[k][0] == key), None)
        if key is None or found is None:
            if m[1].lower() in lines:
                noise += 1
            else:
                made_up += 1
            continue
        at = found
        _, actor, before = events[found]
        for part in m[2].split(". ")[0].split(", "):
            pm = PART.match(part.strip())
            if pm is not None:
                claims.append((pm[2], part_is_right(pm[2], key, actor, before, pm[1])))
    return claims, steps, made_up, noise


def _share(k: int, n: int) -> float | None:
    return round(100 * k / n, 1) if n else None


def think_table(lines: Sequence[dict[str, Any]], benchmark: str) -> dict[str, Any]:
    """The figures of one benchmark's sample lines."""
    thinks = [(think_text(line.get("response") or "") or "").strip() for line in lines]
    # the same item asked in two option orders ("...#shift1") may think the same: not a template
    items_of: dict[str, set[str]] = {}
    for line, t in zip(lines, thinks):
        if t:
            items_of.setdefault(t, set()).add(str(line.get("id", "")).split("#")[0])
    with_think = [ln for ln, t in zip(lines, thinks) if t]
    without = [ln for ln, t in zip(lines, thinks) if not t]
    unclosed = sum(1 for ln in lines if "</answer>" not in (ln.get("response") or "")
                   and ("<think>" in (ln.get("response") or "")
                        or "<answer>" in (ln.get("response") or "")))
    out: dict[str, Any] = {
        "n": len(lines),
        "think": _share(len(with_think), len(lines)),
        "empty": _share(len(without), len(lines)),
        "repeated": _share(sum(1 for t in thinks if t and len(items_of[t]) > 1), len(lines)),
        "unclosed": _share(unclosed, len(lines)),
        "accuracy_with_think": _share(sum(bool(ln.get("correct")) for ln in with_think),
                                      len(with_think)),
        "accuracy_without_think": _share(sum(bool(ln.get("correct")) for ln in without),
                                         len(without)),
    }
    if benchmark == "tomi":
        claims, steps, made_up, noise = [], 0, 0, 0
        for ln, t in zip(lines, thinks):
            c, s, m, z = presence_claims(t, story_of(ln))
            claims += c
            steps += s
            made_up += m
            noise += z
        out["step_lines"] = steps
        out["made_up_steps"] = _share(made_up, steps)
        out["noise_steps"] = _share(noise, steps)
        out["presence_claims"] = len(claims)
        out["presence_right"] = _share(sum(ok for _, ok in claims), len(claims))
        out["presence_right_by_part"] = {
            part: {"n": sum(p == part for p, _ in claims),
                   "right": _share(sum(ok for p, ok in claims if p == part),
                                   sum(p == part for p, _ in claims))}
            for part in PARTS if any(p == part for p, _ in claims)}
    return out


def tables_of(samples: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The figures of each benchmark of one run, from its sample lines."""
    return {name: think_table(lines, name) for name, lines in samples.items()}


def run_tables(folder: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    label, samples = read_samples(folder)
    return label, tables_of(samples)


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def markdown(tables: dict[str, dict[str, dict[str, Any]]]) -> str:
    cols = ("n", "think", "empty", "repeated", "unclosed", "accuracy_with_think",
            "accuracy_without_think")
    out = ["| run | benchmark | " + " | ".join(c.replace("_", " ") for c in cols) + " |",
           "|" + "---|" * (len(cols) + 2)]
    presence = []
    for label, benches in tables.items():
        for bench, t in benches.items():
            out.append(f"| {label} | {bench} | " + " | ".join(_fmt(t[c]) for c in cols) + " |")
            if t.get("step_lines"):
                parts = ", ".join(f"{p} {v['right']:g}% of {v['n']}" if v["right"] is not None
                                  else f"{p} -" for p, v in t["presence_right_by_part"].items())
                presence.append(f"| {label} | {t['step_lines']} | {_fmt(t['made_up_steps'])} | "
                                f"{_fmt(t['noise_steps'])} | "
                                f"{t['presence_claims']} | {_fmt(t['presence_right'])} | {parts} |")
    if presence:
        out += ["", "ToMi presence claims (percent right; made up: step sentences the story does "
                "not have; noise: story lines that are no event, 'Ella hates the garden'):", "",
                "| run | step lines | made up % | noise % | claims | right % | right by part "
                "claimed |", "|---|---|---|---|---|---|---|", *presence]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.think_report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="eval run outputs (results.json and samples/)")
    args = p.parse_args(argv)
    try:
        tables = dict(run_tables(folder) for folder in args.runs)
    except (InputError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(markdown(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())
