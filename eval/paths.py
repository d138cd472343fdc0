"""Paths the user names on a command line or in a config: their errors in the user's terms.

Every command prints one line `error: ...` for bad input; these helpers make that line say what
is wrong with a path ("is a folder, expected a file") instead of Python's "[Errno 21] Is a
directory", and tell a local model folder from a Hugging Face hub id before transformers does
(its message for a missing folder is the hub's "Repo id must use alphanumeric chars").
"""
from __future__ import annotations

import errno
from pathlib import Path

_REASONS = {
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "is a folder, expected a file",
    errno.ENOTDIR: "a part of this path is a file, not a folder",
    errno.EEXIST: "already exists: choose another output path or remove it first",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "the file system is read-only",
}


def describe_error(e: BaseException) -> str:
    """One line for `error: ...`: an OSError as `PATH: reason`, anything else as its message."""
    if isinstance(e, UnicodeDecodeError):
        return f"not a UTF-8 text file ({e.reason})"
    if isinstance(e, OSError) and e.errno in _REASONS:
        where = f"{e.filename}: " if e.filename else ""
        return where + _REASONS[e.errno]
    return " ".join(str(e).split()) or type(e).__name__


def looks_local(path: str) -> bool:
    """True when `path` can only be a local path, not a hub id ("org/name").

    A hub id has exactly one "/" and does not start with "/", "." or "~"; "runs/sft/tiny" has two,
    and "runs/tiny" is local when "runs" is a folder here (a user's relative output folder)."""
    if path.startswith(("/", ".", "~")) or path.count("/") > 1 or path.endswith("/"):
        return True
    head, sep, _ = path.partition("/")
    return bool(sep) and Path(head).is_dir()


def missing_local_model(path: str) -> str | None:
    """Why `path` names a local model folder that is not there, or a folder that holds no
    model (no config.json: transformers would fail later, deep in tokenizer loading, with a
    message that never says so), else None (hub ids pass)."""
    if not looks_local(path):
        return None
    p = Path(path).expanduser()
    if p.is_dir():
        if (p / "config.json").is_file() or (p / "adapter_config.json").is_file():
            return None
        return ("is a folder without config.json, not a model folder (python -m "
                "rl.import_model or save_pretrained writes one)")
    reason = "is a file, expected a model folder" if p.exists() else "no such folder"
    return f"{reason} (a local model path; a hub id looks like org/name)"
