"""`VLLMServer`'s life cycle without vLLM: a stand-in "python" that answers /health is started,
found ready and stopped with its whole process group; one that dies first, or never answers, is a
one-line `BackendError` that quotes the end of its log. (tests/test_served_model.py serves a real
model with it.)"""
from __future__ import annotations

import logging
import os
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from eval.backends import BackendError, vllm_server
from eval.backends.vllm_server import VLLMServer, cpu_defaults, serve_flags, with_cpu_flags

HEALTH = textwrap.dedent("""\
    import http.server, sys, subprocess
    port = int(sys.argv[sys.argv.index("--port") + 1])
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # one of its own
    print("worker", worker.pid, flush=True)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404); self.end_headers()
        def log_message(self, *a): pass
    print("serving", sys.argv[1:], flush=True)
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


def stand_in(tmp_path, body: str):
    script = tmp_path / "server.py"
    script.write_text(body)
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    exe.chmod(0o755)
    return exe


def test_started_found_ready_and_stopped_with_its_workers(tmp_path):
    server = VLLMServer("some/model", python=stand_in(tmp_path, HEALTH), args=["--dtype", "float32"],
                        log=tmp_path / "server.log")
    with server:
        pid = server.process.pid
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1" and server.startup_s < 30
        assert server.command()[1:4] == ["-m", "eval.backends.vllm_server", "serve"]
        assert os.getpgid(pid) == pid  # its own group: stopping it stops the workers too
    assert server.process is None
    log = (tmp_path / "server.log").read_text()
    worker = int(log.split("worker ")[1].split()[0])
    for p in (pid, worker):  # gone, or a zombie waiting for its new parent to reap it
        assert not alive(p), p
    assert "'--dtype', 'float32'" in log


def alive(pid: int) -> bool:
    for _ in range(50):
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z":
            return False
        time.sleep(0.1)
    return True


def test_a_server_that_dies_first_is_one_clear_error(tmp_path):
    dying = stand_in(tmp_path, "import sys; print('no such model: some/model'); sys.exit(3)")
    with pytest.raises(BackendError, match=r"exited with code 3 before it was ready.*no such model"):
        VLLMServer("some/model", python=dying, log=tmp_path / "server.log").start()


def test_a_server_that_never_answers_is_stopped_and_reported(tmp_path):
    silent = stand_in(tmp_path, "import time; print('loading forever', flush=True); time.sleep(600)")
    server = VLLMServer("m", python=silent, startup_timeout_s=2, log=tmp_path / "server.log")
    with pytest.raises(BackendError, match=r"did not answer .*/health within 2 s.*loading forever"):
        server.start()
    assert server.process is None


def test_cpu_defaults_fill_only_what_is_unset():
    env = {"VLLM_CPU_KVCACHE_SPACE": "8"}
    cpu_defaults(env)
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "8"
    cores = sorted(os.sched_getaffinity(0))
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == f"{cores[0]}-{cores[-1]}"


def test_cpu_flags_are_added_unless_the_command_line_sets_them_either_way():
    assert with_cpu_flags(["serve", "m"]) == ["serve", "m", "--enforce-eager", "--no-enable-chunked-prefill"]
    assert with_cpu_flags(["serve", "m", "--enable-chunked-prefill"]) == [
        "serve", "m", "--enable-chunked-prefill", "--enforce-eager"]
    assert with_cpu_flags(["serve", "m", "--enforce-eager", "--no-enable-chunked-prefill"]) == [
        "serve", "m", "--enforce-eager", "--no-enable-chunked-prefill"]


def test_engine_options_become_the_serve_flags_of_the_same_settings():
    assert serve_flags({"dtype": "float32", "max_model_len": 4096, "enable_prefix_caching": True,
                        "enable_chunked_prefill": False}) == [
        "--dtype", "float32", "--max-model-len", "4096", "--enable-prefix-caching",
        "--no-enable-chunked-prefill"]


@pytest.mark.parametrize("level, expected", [("ERROR", logging.ERROR), ("", logging.NOTSET),
                                             ("loud", logging.NOTSET)])
def test_import_vllm_applies_the_logging_level_before_vllm_logs(monkeypatch, level, expected):
    """vLLM's modules log while being imported, before vLLM applies VLLM_LOGGING_LEVEL: the level
    is set on its logger first (a warning logged at import is then dropped at ERROR)."""
    fake = types.ModuleType("vllm")
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", level)
    logger = logging.getLogger("vllm")
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    assert vllm_server.import_vllm() is fake
    assert logger.level == expected


def test_import_vllm_gives_the_engines_sockets_a_folder_of_their_own(monkeypatch, tmp_path):
    """vLLM's engines leave their socket files where VLLM_RPC_BASE_PATH says: a private folder
    unless the user chose one."""
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setattr(vllm_server.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("VLLM_RPC_BASE_PATH", "")  # unset, and restored after the test
    vllm_server.import_vllm()
    folder = Path(os.environ["VLLM_RPC_BASE_PATH"])
    assert folder.is_dir() and folder.parent == tmp_path and folder.name.startswith("vllm-ipc-")
    monkeypatch.setenv("VLLM_RPC_BASE_PATH", "/elsewhere")
    vllm_server.import_vllm()
    assert os.environ["VLLM_RPC_BASE_PATH"] == "/elsewhere"
