"""Seeded draws that repeat across processes: every seeded choice of the export (the split, the
caps, the multiple-choice share, the stated placements) keys on `stable_hash`."""
from __future__ import annotations

import hashlib
from typing import Any


def stable_hash(*parts: Any) -> str:
    """A hex digest of the parts: unlike hash(), the same in every process, so seeded choices
    repeat."""
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


def in_share(key: str, share: float) -> bool:
    """Whether a `stable_hash` key falls in the first `share` of [0, 1): a seeded draw."""
    return int(key[:16], 16) / 16 ** 16 < share
