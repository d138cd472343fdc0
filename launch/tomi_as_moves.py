"""A diagnostic copy of a ToMi folder whose stated placements are written as moves.

ToMi (and Hi-ToM) open a scene with a placement nobody performs: "The apple is in the
blue_drawer." Our story language places an object only by someone's action ("Logan moved the apple
to the blue_drawer."), so a model trained on our stories, and the trace it writes before answering,
has no step for such a sentence. This copy rewrites each stated placement as a move by one of the
people in the room at that line (the room most of the present people are in: where ToMi puts its
objects), which leaves every belief the same (the mover is one of the people who saw the
statement) and changes only the wording. A model whose false-belief answers recover on the copy
stumbled on the wording, not on the belief (docs/experiments.md, 2026-11-28 night session). It
is a diagnostic of a model, not a benchmark: no score on the copy stands for ToMi's.

    python launch/tomi_as_moves.py ../shared/benchmarks/tomi runs/tomi-as-moves
    python -m eval run tomi --data tomi=runs/tomi-as-moves --model MODEL ...
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from eval.shortcuts import PLACED  # "The apple is in the box.": the shortcut reader's placement

ENTERED = re.compile(r"(\w+) entered the (\w+)\.$")
EXITED = re.compile(r"(\w+) exited the (\w+)\.$")
FILES = ("fb_all_test.txt", "fb_all_test.trace")


def as_moves(lines: list[str]) -> tuple[list[str], int]:
    """The bAbI-style lines with each stated placement made a move; and how many were rewritten
    (a placement with nobody in any room is left as it is)."""
    out, rooms, rewritten = [], {}, 0
    for line in lines:
        number, _, text = line.partition(" ")
        if number == "1":  # a new story
            rooms = {}
        if m := ENTERED.match(text):
            rooms[m.group(1)] = m.group(2)
        elif m := EXITED.match(text):
            rooms.pop(m.group(1), None)
        elif (m := PLACED.match(text)) and rooms:
            present = list(rooms.values())
            room = max(present, key=present.count)
            mover = [p for p, r in rooms.items() if r == room][-1]  # the latest to come in
            text = f"{mover} moved the {m.group(1)} to the {m.group(2)}."
            rewritten += 1
        out.append(f"{number} {text}")
    return out, rewritten


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("src", type=Path, help="a ToMi folder (fb_all_test.txt and .trace)")
    p.add_argument("dst", type=Path, help="the folder to write the copy to")
    args = p.parse_args(argv)
    missing = [f for f in FILES if not (args.src / f).is_file()]
    if missing:
        print(f"error: {args.src}: no {', '.join(missing)}", file=sys.stderr)
        return 2
    lines = (args.src / FILES[0]).read_text(encoding="utf-8").splitlines()
    out, rewritten = as_moves(lines)
    args.dst.mkdir(parents=True, exist_ok=True)
    (args.dst / FILES[0]).write_text("\n".join(out) + "\n", encoding="utf-8")
    shutil.copyfile(args.src / FILES[1], args.dst / FILES[1])
    stated = sum(1 for line in lines if PLACED.match(line.partition(" ")[2]))
    print(f"wrote {args.dst}: {rewritten} of {stated} stated placements made moves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
