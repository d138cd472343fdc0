"""Small row datasets for the training tests: templated Sally-Anne-style stories.

Two sources with different answer types, so mixing, per-source and per-order metrics have something
to separate: `toy-location` (where someone will look / where something is: `short` answers) and
`toy-knowledge` (does someone know where something is: `yes_no`).
"""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

from eval.rows import make_row


@pytest.fixture(autouse=True)
def fresh_wandb():
    """Each test starts with its own wandb: a training run sets WANDB_* variables for its process
    (rl.run.setup_logging_env) and wandb keeps its settings, the first run's folder included,
    for the life of the process, so a second test's offline run would land in the first one's
    folder. A real run is one process, so only the tests need this."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("WANDB_")}
    yield
    wandb = sys.modules.get("wandb")
    if wandb is not None:
        wandb.finish()
        wandb.teardown()
    for k in [k for k in os.environ if k.startswith("WANDB_")]:
        del os.environ[k]
    os.environ.update(saved)

PEOPLE = ["Sally", "Anne", "Tom", "Mia", "Omar", "Lena"]
OBJECTS = ["marble", "apple", "key", "ball", "coin", "book"]
CONTAINERS = ["basket", "box", "drawer", "bag", "cupboard", "jar"]


def _story(rng: random.Random) -> tuple[str, dict]:
    a, b = rng.sample(PEOPLE, 2)
    obj = rng.choice(OBJECTS)
    c1, c2 = rng.sample(CONTAINERS, 2)
    leaves = rng.random() < 0.5  # a false belief arises only when `a` misses the move
    text = f"{a} and {b} are in the room. {a} puts the {obj} in the {c1}. "
    text += f"{a} leaves the room. " if leaves else f"{a} stays in the room. "
    text += f"{b} moves the {obj} to the {c2}."
    return text, {"a": a, "b": b, "obj": obj, "c1": c1, "c2": c2, "leaves": leaves}


def toy_rows(n: int, source: str, seed: int = 0) -> list[dict]:
    rng = random.Random(f"{source}-{seed}")
    rows = []
    for i in range(n):
        text, s = _story(rng)
        belief = s["c1"] if s["leaves"] else s["c2"]
        if source == "toy-location":
            order = rng.choice([0, 1])
            if order == 0:
                q, ans = f"Where is the {s['obj']} now?", s["c2"]
            else:
                q, ans = f"Where will {s['a']} look for the {s['obj']}?", belief
            row = make_row(id=f"{source}-{seed}-{i}", source=source, user=f"{text}\n{q}",
                           answer=ans, answer_type="short",
                           meta={"order": order, "false_belief": s["leaves"] and order > 0})
        else:
            q = f"Does {s['a']} know that the {s['obj']} is in the {s['c2']}?"
            row = make_row(id=f"{source}-{seed}-{i}", source=source, user=f"{text}\n{q}",
                           answer="no" if s["leaves"] else "yes", answer_type="yes_no",
                           meta={"order": 1, "false_belief": s["leaves"]})
        rows.append(row)
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory) -> dict[str, Path]:
    """A JSONL file (toy-location) and a `save_to_disk` DatasetDict folder (toy-knowledge)."""
    from datasets import Dataset, DatasetDict

    root = tmp_path_factory.mktemp("toy-data")
    loc = write_jsonl(root / "location.jsonl", toy_rows(96, "toy-location"))
    know = DatasetDict({
        "train": Dataset.from_list(toy_rows(64, "toy-knowledge", seed=0)),
        "test": Dataset.from_list(toy_rows(16, "toy-knowledge", seed=1)),
    })
    know.save_to_disk(str(root / "knowledge"))
    return {"location": loc, "knowledge": root / "knowledge"}


@pytest.fixture(scope="session")
def tiny_model_dir(toy_data, tmp_path_factory) -> Path:
    """A tiny Llama (rl.tiny_model) whose tokenizer is trained on the toy rows."""
    from rl.tiny_model import build_tiny_model, read_corpus

    root = tmp_path_factory.mktemp("tiny-model")
    return build_tiny_model(list(read_corpus([toy_data["location"]])), root / "tiny", hidden_size=32,
                            num_layers=1, num_heads=2, num_kv_heads=1)
