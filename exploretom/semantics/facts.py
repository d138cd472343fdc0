"""What the tracker and the message rules (exploretom.semantics.messages) both speak of: a chain of
people, a fact, the values a belief takes, and the error a failed precondition raises.

Kept apart so that the message rules need not import the tracker, which mixes them in (imports
run one way; `exploretom.semantics.tracker` re-exports everything here: import from there).
"""
from __future__ import annotations

from typing import NamedTuple

OPEN = ""  # container value of an object lying in the open, in no container

Chain = tuple
Fact = tuple
Loc = tuple  # (room | None, container | OPEN | None)


class Away(NamedTuple):
    """Belief about a person: not in `room`, whereabouts otherwise unknown."""

    room: str


class StoryError(ValueError):
    """A precondition failed: names the action, its type and the reason.

    `index` is 0-based (a position in the actions list); the message numbers actions from 1,
    as the sentences of the rendered story are read ("action 6" is the sixth sentence)."""

    def __init__(self, index: int, action_type: str, reason: str) -> None:
        super().__init__(f"action {index + 1} ({action_type}): {reason}")
        self.index, self.action_type, self.reason = index, action_type, reason
