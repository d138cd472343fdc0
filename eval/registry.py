"""The registries found by their files (benchmarks, backend kinds): the modules of a package's
folders. A package's folders are its `__path__`, Python's own list of where its modules are found:
its folder in this checkout, and any folder a caller adds (the tests add a throwaway benchmark and
backend so). Adding a benchmark or a backend is adding its module: there is no list to edit.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable


def module_names(folders: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """The names of the modules (`*.py` files) in `folders`, sorted, but for private ones (a
    leading underscore) and those in `skip`."""
    skip = set(skip)
    return sorted({p.stem for folder in folders for p in Path(folder).glob("*.py")
                   if not p.stem.startswith("_") and p.stem not in skip})
