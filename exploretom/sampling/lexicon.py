"""The offline context lexicon: hand-written settings standing in for the paper's LLM-sampled
contexts (section 2.1). `sample_context` draws one context the way the paper's prompt asks for
one: characters with roles, rooms, one object, opaque containers, topics, state updates.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# exploretom/data/contexts.json: the package's data folder, one level above this one
LEXICON_PATH = Path(__file__).parents[1] / "data" / "contexts.json"


@dataclass(frozen=True)
class StateUpdate:
    state_type: str
    state_value: str
    text: str  # with a "{person}" placeholder
    visible: bool


@dataclass(frozen=True)
class Context:
    setting: str
    description: str
    people: tuple[str, ...]
    roles: tuple[str, ...]
    rooms: tuple[str, ...]
    object: str
    containers: tuple[str, ...]
    topics: tuple[str, ...]
    state_updates: tuple[StateUpdate, ...]

    def to_json(self) -> dict[str, Any]:
        """The story's `context` field (STORY_FORMAT.md)."""
        return {
            "setting": self.setting,
            "description": self.description,
            "people": [{"name": n, "role": r} for n, r in zip(self.people, self.roles)],
            "rooms": list(self.rooms),
            "objects": [self.object],
            "containers": list(self.containers),
            "topics": list(self.topics),
            "state_updates": [{"object": self.object, "state_type": s.state_type,
                               "state_value": s.state_value, "text": s.text,
                               "visible": s.visible} for s in self.state_updates],
        }


@lru_cache(maxsize=4)
def load_lexicon(path: str | Path = LEXICON_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sample_context(rng: random.Random, people: int, rooms: int, containers: int = 3,
                   topics: int = 3, lexicon: dict[str, Any] | None = None) -> Context:
    """One context with exactly `people` names and `rooms` rooms from a random setting."""
    lex = lexicon or load_lexicon()
    settings = [s for s in lex["settings"] if len(s["rooms"]) >= rooms]
    if not settings:
        raise ValueError(f"no setting of the lexicon has {rooms} rooms")
    if people > len(lex["names"]):
        raise ValueError(f"the lexicon has only {len(lex['names'])} names, {people} asked")
    s = rng.choice(settings)
    obj = rng.choice(s["objects"])
    roles = rng.sample(s["roles"], min(people, len(s["roles"])))
    roles += [rng.choice(s["roles"]) for _ in range(people - len(roles))]
    return Context(
        setting=s["id"],
        description=s["description"],
        people=tuple(rng.sample(lex["names"], people)),
        roles=tuple(roles),
        rooms=tuple(rng.sample(s["rooms"], rooms)),
        object=obj["name"],
        containers=tuple(rng.sample(obj["containers"], min(containers, len(obj["containers"])))),
        topics=tuple(rng.sample(s["topics"], min(topics, len(s["topics"])))),
        state_updates=tuple(StateUpdate(**u) for u in obj["state_updates"]),
    )
