"""The offline walkthrough of docs/tomsynth.md: the fake server started with the offline writer,
then generate -> filter -> build with configs/tomsynth/offline.yaml, keeps every item (the
server's default echo reply would make stage 1 drop them all)."""
from __future__ import annotations

import os
from pathlib import Path

import yaml
from datasets import load_from_disk

from eval.backends.fake_server.process import spawn
from tomsynth.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_offline_walkthrough_builds_a_dataset(tmp_path, capsys):
    cfg = yaml.safe_load((REPO / "configs/tomsynth/offline.yaml").read_text(encoding="utf-8"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with spawn(reply="tomsynth.offline_writer:reply", lifetime_s=120, env=env) as url:
        # the shipped config names port 8765; this test takes a free port instead
        for role in ("generator", "verifier"):
            assert cfg[role]["base_url"] == "http://127.0.0.1:8765/v1"
            cfg[role]["base_url"] = f"{url}/v1"
        cfg["out_dir"] = str(tmp_path / "run")
        path = tmp_path / "offline.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        assert main(["generate", "-c", str(path), "--limit-units", "8", "--quiet"]) == 0
        assert main(["filter", "-c", str(path), "--quiet"]) == 0
        assert main(["build", "-c", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "main: 32 generated -> stage 1 kept 32 (100.0%) -> stage 3 kept 32 of 32 judged (100.0%) [PASS=32], pending 0" in printed
    rows = load_from_disk(str(tmp_path / "run" / "datasets" / "ToM-Synth-27K"))["train"]
    assert len(rows) == 32 and set(rows["answer"]) <= set("ABCD")
