"""The `served` backend: the server is started for the backend and stopped with it, asked as the
openai backend asks a served model; its options are checked before anything starts. Here the
bundled fake server stands in for `vllm serve` (started by the same VLLMServer, through the
`python` option); tests/test_served_model.py runs the real one."""
from __future__ import annotations

import json
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from eval.backends import BACKENDS, BackendError, accepted_options, backend_class, load_backend
from eval.backends.base import GenerationConfig
from eval.backends.kinds.openai import OpenAIOptions


def model_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    return folder


def stand_in(tmp_path: Path) -> Path:
    """A 'Python' that, asked to run `vllm serve MODEL --host H --port P ...`, runs the fake
    server on that port instead (its replies echo the question)."""
    script = tmp_path / "python"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m eval.backends.fake_server --port "$8"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_served_is_a_backend_whose_options_are_openais_but_the_endpoint():
    assert "served" in BACKENDS and backend_class("served").local_weights
    accepted = set(accepted_options(backend_class("served")))
    assert accepted == (set(OpenAIOptions.model_fields) - {"base_url", "api_key_env"}
                        | {"server_args", "python", "startup_timeout_s"})


@pytest.mark.parametrize("options, said", [
    ({"base_url": "http://localhost:8000/v1"}, "unknown option 'base_url'"),
    ({"concurrency": 0}, "served backend option 'concurrency'"),
])
def test_a_bad_option_is_refused_before_any_server_starts(tmp_path, options, said):
    with pytest.raises(BackendError, match=said):
        load_backend("served", str(model_folder(tmp_path)), python="/nonexistent/python", **options)


def test_a_missing_model_folder_is_named_before_any_server_starts(tmp_path):
    with pytest.raises(BackendError, match="missing: no such folder"):
        load_backend("served", str(tmp_path / "missing"), python="/nonexistent/python")


def test_the_server_answers_and_stops_with_the_backend(tmp_path):
    model = str(model_folder(tmp_path))
    backend = load_backend("served", model, python=str(stand_in(tmp_path)), concurrency=4,
                           startup_timeout_s=60)
    process = backend.server.process
    try:
        assert backend.describe()["backend"] == "served" and backend.model == model
        assert backend.base_url == backend.server.base_url
        out = backend.generate([[{"role": "user", "content": f"question {i}"}] for i in range(3)],
                               GenerationConfig(max_new_tokens=8))
        assert [c.text for c in out] == ["question 0", "question 1", "question 2"]
    finally:
        backend.close()
    assert process.poll() is not None and backend.server.process is None
    assert not backend.server.log_path.exists()  # its temporary log goes with a server that ran


def test_a_server_that_dies_is_one_error_naming_its_log(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the log it keeps goes with the test's folder
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho 'no such engine' >&2\nexit 3\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(BackendError, match="exited with code 3.*no such engine"):
        load_backend("served", str(model_folder(tmp_path)), python=str(script))
