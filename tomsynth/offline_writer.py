"""A scripted writer and verifier for running ToM-Synth offline against the bundled fake server.

    python -m eval.backends.fake_server --port 8765 --reply tomsynth.offline_writer:reply

answers every synthesis prompt with one well-formed item (a fixed false-belief scene cast with
the names the prompt offers, options shuffled per prompt) and every verification prompt with
PASS, so that `generate -> filter -> build` runs end to end on a machine with no model
(docs/tomsynth.md, "Offline walkthrough"). The items show the pipeline's mechanics, not data
worth training on: every unit gets the same scene. The tests' scripted server builds its
defective and judged variants on top of these functions.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from eval.backends.fake_server.api import Request

NAMES_LINE = re.compile(r"use no more than \d+ characters in total: (.+)\.\n")
ITEM_BLOCK = re.compile(r"<item>\n### (\w+)\n(.*?)\n\n### Question\n(.*?)\n\n### Options\n(.*?)\n\n"
                        r"### Labelled answer\n([A-D])\n</item>", re.S)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def valid_item(rng: random.Random, names: list[str], dialogue: bool, entry: str) -> dict[str, Any]:
    """One item in the JSON shape the synthesis prompt asks for; `entry` is written into the
    text as a marker (the tests use it to pick an item's verdict)."""
    a, b, c = names[:3]
    place, other = rng.sample(["the blue folder", "the desk drawer", "the filing cabinet", "the side shelf"], 2)
    if dialogue:
        text = (f"{a}: I'm leaving the signed forms in {place} before the meeting.\n"
                f"{b}: Fine. I'll be at the front desk until noon.\n"
                f"(While {a} is out, {c} moves the forms to {other} to make room.)\n"
                f"{c}: There, that space is clear now.\n"
                f"{a} (returning): Right, let me grab those forms for the review. [{entry}]")
    else:
        text = (f"{a} left the signed forms in {place} before the meeting and went to fetch coffee. "
                f"{b} was at the front desk all morning. While {a} was away, {c} moved the forms to "
                f"{other} to make room for a delivery and did not mention it to anyone. "
                f"{a} came back and got ready for the review. [{entry}]")
    options = [f"{a} reaches for {place.removeprefix('the ')} expecting the forms there",
               f"{a} heads straight to {other.removeprefix('the ')} to pick them up",
               f"{a} asks {b} at the front desk where the forms were taken",
               f"{a} starts the review without the forms and apologises to all"]
    correct = options[0]
    rng.shuffle(options)
    answer = "ABCD"[options.index(correct)]
    return {"narrative" if not dialogue else "dialogue": text,
            "question": f"What will {a} most likely do first when the review starts?",
            "options": dict(zip("ABCD", options)), "answer": answer,
            "analysis": f"{a} did not see the move, so expects the forms where they were left."}


def write_item(user: str, entry: str = "offline") -> dict[str, Any]:
    """The item for a synthesis prompt: a function of the prompt alone (re-runs agree)."""
    rng = random.Random(int(digest(user)[:16], 16))
    names = NAMES_LINE.search(user).group(1).split(", ")
    return valid_item(rng, names, "- Format: Dialogue" in user, entry)


def reply(request: Request) -> str:
    """The fake server's reply function: an item for synthesis prompts, PASS for verification."""
    user = request.last_user
    if "<item>" in user:
        return json.dumps({"judgment": "PASS", "correct_answer": None, "reason": "scripted offline verifier"})
    return json.dumps(write_item(user))
