"""The social units: mental state x situation x format (paper, sections 2-3.1, appendix A).

Two collections:
- `main` (ToM-Synth-27K): the 36 fine-grained mental-state values x 96 situations x 2 formats =
  6,912 units, 4 entries each by default.
- `contrast` (ToM-Synth-27K-Contrast): 12 values (the 6 dimensions themselves plus the 6
  second-order values) x 96 x 2 = 2,304 units, 12 entries each by default.

Unit ids are built from the keys in the data files, e.g.
`m.mixed-emotions.education.school-bullying.dialogue` (`c.` for contrast units), so they stay the
same when the lists are reordered or extended. Entry ids append `.e<k>`.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import yaml

HERE = Path(__file__).resolve().parent
COLLECTIONS = ("main", "contrast")
PREFIX = {"main": "m", "contrast": "c"}
NAMES_PER_ENTRY = 10  # the pool shown to the generator, which may use at most 4 of them


@dataclass(frozen=True)
class MentalState:
    key: str
    name: str
    definition: str
    dimension: str  # dimension key
    dimension_name: str
    contrast: bool  # one of the 12 values of the Contrast collection


@dataclass(frozen=True)
class Situation:
    key: str
    name: str
    domain: str
    domain_name: str


@dataclass(frozen=True)
class Format:
    key: str
    name: str
    field: str
    description: str


@dataclass(frozen=True)
class Unit:
    collection: str
    mental_state: MentalState
    situation: Situation
    format: Format

    @property
    def id(self) -> str:
        return ".".join((PREFIX[self.collection], self.mental_state.key, self.situation.domain,
                         self.situation.key, self.format.key))

    def entry_id(self, k: int) -> str:
        return f"{self.id}.e{k}"

    def factors(self) -> dict[str, str]:
        """The unit's factors as they go into dataset `meta`."""
        return {
            "unit": self.id, "collection": self.collection,
            "dimension": self.mental_state.dimension_name, "mental_state": self.mental_state.name,
            "mental_state_key": self.mental_state.key, "domain": self.situation.domain_name,
            "situation": self.situation.name, "format": self.format.name,
        }

    def names_for(self, k: int) -> list[str]:
        """The character names offered to the generator for entry k: a fixed pseudo-random draw
        per entry, so re-running renders the same prompt and entries of a unit differ."""
        rng = random.Random(int(hashlib.sha256(self.entry_id(k).encode()).hexdigest()[:16], 16))
        return rng.sample(character_names(), NAMES_PER_ENTRY)


def _load_yaml(name: str) -> dict:
    return yaml.safe_load((HERE / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def character_names() -> list[str]:
    return list(json.loads((HERE / "names.json").read_text(encoding="utf-8"))["names"])


@lru_cache(maxsize=None)
def dimensions() -> tuple[MentalState, ...]:
    """The 6 dimensions, as the mental-state values of the Contrast collection."""
    return tuple(MentalState(d["key"], d["name"], " ".join(d["definition"].split()), d["key"], d["name"], True)
                 for d in _load_yaml("mental_states.yaml")["dimensions"])


@lru_cache(maxsize=None)
def mental_states() -> tuple[MentalState, ...]:
    """The 36 fine-grained values."""
    return tuple(
        MentalState(v["key"], v["name"], " ".join(v["definition"].split()), d["key"], d["name"],
                    bool(v.get("contrast", False)))
        for d in _load_yaml("mental_states.yaml")["dimensions"] for v in d["values"]
    )


@lru_cache(maxsize=None)
def situations() -> tuple[Situation, ...]:
    return tuple(Situation(s["key"], s["name"], d["key"], d["name"])
                 for d in _load_yaml("situations.yaml")["domains"] for s in d["situations"])


@lru_cache(maxsize=None)
def formats() -> tuple[Format, ...]:
    return tuple(Format(f["key"], f["name"], f["field"], " ".join(f["description"].split()))
                 for f in _load_yaml("formats.yaml")["formats"])


def contrast_states() -> tuple[MentalState, ...]:
    """The 12 values of ToM-Synth-27K-Contrast: the 6 dimensions and the 6 second-order values."""
    return dimensions() + tuple(m for m in mental_states() if m.contrast)


@lru_cache(maxsize=None)
def units(collection: str = "main") -> tuple[Unit, ...]:
    """Every unit of a collection, in a fixed order (mental state, situation, format)."""
    if collection not in COLLECTIONS:
        raise ValueError(f"unknown collection {collection!r} (known: {', '.join(COLLECTIONS)})")
    states = mental_states() if collection == "main" else contrast_states()
    return tuple(Unit(collection, m, s, f) for m in states for s in situations() for f in formats())


def select(all_units: Iterable[Unit], limit: int | None) -> list[Unit]:
    """`limit` units spread evenly over the list, alternating formats, so a small test subset
    still covers many mental states, domains and both formats; all of them when `limit` is None."""
    pool = list(all_units)
    if limit is None or limit >= len(pool):
        return pool
    if limit <= 0:
        return []
    pairs = len(pool) // 2  # consecutive units differ only in format
    if limit <= pairs:
        # One pick per window of `width` pairs; the offset inside the window varies so that the
        # picks do not all land on the same situation.
        width = pairs // limit
        return [pool[2 * (i * pairs // limit + (i * 37) % width) + i % 2] for i in range(limit)]
    return [pool[i * len(pool) // limit] for i in range(limit)]


@lru_cache(maxsize=None)
def _index(collection: str) -> dict[str, Unit]:
    return {u.id: u for u in units(collection)}


def unit_by_id(unit_id: str) -> Unit:
    """The unit with this id (KeyError if none)."""
    return _index("main" if unit_id.startswith(PREFIX["main"] + ".") else "contrast")[unit_id]
