"""The whole ToM-Synth pipeline against the local fake server: generate (anthropic API) ->
filter (verifier on the OpenAI API) -> build -> stats, with 30% of requests failing (429, 500,
timeouts), every kind of malformed or hostile generator reply, every verifier judgment, and a
recognisable fake API key that must not appear in any output."""
from __future__ import annotations

import json
from collections import Counter

from datasets import load_from_disk

from eval.rows import meta, validate_row
from tomsynth import generate
from tomsynth.cli import main
from tomsynth.config import load_config

MAIN_UNITS = 10  # 40 main entries
CONTRAST_UNITS = 2  # 24 contrast entries


def _run(*args: str) -> int:
    return main(list(args))


def test_whole_pipeline_with_faults_and_hostile_replies(tmp_path, server, script, fake_key, kit, capsys):
    DEFECTS, JUDGMENT_KINDS, write_config = kit.DEFECTS, kit.JUDGMENT_KINDS, kit.write_config
    out = tmp_path / "run"
    cfg_path = write_config(tmp_path / "run.yaml", server, out)
    cfg = load_config(cfg_path)
    reqs = generate.requests(cfg, collections=["main"], limit_units=MAIN_UNITS) + [
        r for r in generate.requests(cfg, collections=["contrast"], limit_units=CONTRAST_UNITS)]
    # `--limit-units` applies per collection, so the CLI's request list is exactly this one.
    assert len(reqs) == 4 * MAIN_UNITS + 12 * CONTRAST_UNITS
    main_reqs = [r for r in reqs if r.unit.collection == "main"]
    defects = {r.entry_id: kind for r, kind in zip(main_reqs, DEFECTS)}
    valid = [r.entry_id for r in reqs if DEFECTS.get(defects.get(r.entry_id, ""), None) is None]
    judged = [e for e in valid if e not in defects][: len(JUDGMENT_KINDS) * 2]
    judgments = {e: JUDGMENT_KINDS[i % len(JUDGMENT_KINDS)] for i, e in enumerate(judged)}
    script.plan(reqs, defects, judgments)

    # Generation, possibly over several runs when a request exhausts its retries.
    for _ in range(4):
        rc = _run("generate", "--config", str(cfg_path), "--limit-units", str(MAIN_UNITS), "--quiet",
                  "--collection", "main")
        if rc == 0:
            break
    assert rc == 0
    for _ in range(4):
        rc = _run("generate", "--config", str(cfg_path), "--limit-units", str(CONTRAST_UNITS), "--quiet",
                  "--collection", "contrast")
        if rc == 0:
            break
    assert rc == 0
    assert server.stats["429"] and server.stats["500"] and server.stats["timeout"], server.stats
    assert server.credentials_seen["x-api-key"] and server.credentials_seen["authorization"] == 0

    # A re-run finds everything done and sends nothing.
    calls = script.generation_calls
    assert _run("generate", "--config", str(cfg_path), "--limit-units", str(MAIN_UNITS), "--quiet",
                "--collection", "main") == 0
    assert script.generation_calls == calls

    for _ in range(4):
        rc = _run("filter", "--config", str(cfg_path), "--quiet")
        if rc == 0:
            break
    assert rc == 0
    assert server.credentials_seen["authorization"] > 0  # the verifier spoke the OpenAI dialect

    report = json.loads((out / "reports" / "filter-main.json").read_text())
    expected_reasons = Counter(r for r in (DEFECTS[k] for k in defects.values()) if r)
    assert report["stage1"]["reasons"] == dict(expected_reasons)
    assert set(report["stage1"]["repairs"]) >= {"code_fence", "surrounding_text", "list_wrapped", "key_case"}
    kept1 = 4 * MAIN_UNITS - sum(expected_reasons.values())
    assert report["stage1"]["kept"] == kept1
    # Stage 2: the correct letter is spread evenly (entries of a unit take distinct letters).
    after = report["stage2"]["letters_after"]
    assert sum(after.values()) == kept1 and max(after.values()) - min(after.values()) <= 4
    assert 0 <= report["stage2"]["length_bias"]["correct_longest_rate"] <= 1
    # Stage 3: every scripted judgment, only PASS kept.
    expected_j = Counter(j for e, j in judgments.items() if e.startswith("m."))
    expected_j["PASS"] = kept1 - sum(expected_j.values())
    assert report["stage3"]["judgments"] == dict(expected_j)
    assert report["stage3"]["pending"] == 0
    got = report["stage3"]["judgments"]
    assert report["final"] == got["PASS"]
    md = (out / "reports" / "filter-main.md").read_text()
    assert "paper" in md and "0.32%" in md and "6.18%" in md

    assert _run("build", "--config", str(cfg_path)) == 0
    d27 = load_from_disk(str(out / "datasets" / "ToM-Synth-27K"))
    dc = load_from_disk(str(out / "datasets" / "ToM-Synth-27K-Contrast"))
    d55 = load_from_disk(str(out / "datasets" / "ToM-Synth-Merged-55K"))
    assert len(d27["train"]) == report["final"]
    assert len(d55["train"]) == len(d27["train"]) + len(dc["train"])
    report_c = json.loads((out / "reports" / "filter-contrast.json").read_text())
    assert len(dc["train"]) == report_c["final"] == 12 * CONTRAST_UNITS - sum(
        1 for e in judgments if e.startswith("c."))
    ids = set()
    for row in d55["train"]:
        validate_row(row)
        assert row["source"] == "tomsynth" and row["answer_type"] == "choice" and len(row["choices"]) == 4
        m = meta(row)
        assert {"unit", "dimension", "mental_state", "domain", "situation", "format"} <= set(m)
        # the balanced answer letter points at the option the generator marked correct
        assert row["choices"]["ABCD".index(row["answer"])] == m["original_options"]["ABCD".index(m["original_answer"])]
        assert row["id"] not in defects or DEFECTS[defects[row["id"]]] is None
        assert judgments.get(row["id"], "PASS") == "PASS"
        ids.add(row["id"])
    assert len(ids) == len(d55["train"])
    card = (out / "datasets" / "ToM-Synth-27K" / "README.md").read_text()
    assert "pretty_name: ToM-Synth-27K" in card and "| dimension | entries | share |" in card
    assert "Stage 1 reasons (main)" in card

    capsys.readouterr()
    assert _run("stats", "--config", str(cfg_path)) == 0
    printed = capsys.readouterr().out
    assert "ToM-Synth-27K" in printed and "by dimension" in printed
    assert (out / "stats" / "ToM-Synth-27K.png").stat().st_size > 10_000
    stats = json.loads((out / "stats" / "stats.json").read_text())
    assert stats["datasets"]["ToM-Synth-27K"]["rows"] == report["final"]

    # The fake key reached the server but nothing we wrote.
    leaked = [p for p in out.rglob("*") if p.is_file() and fake_key.encode() in p.read_bytes()]
    assert leaked == []
    assert fake_key not in printed


def test_sharded_generation_covers_every_entry_once(tmp_path, server, script, fake_key, kit):
    cfg_path = kit.write_config(tmp_path / "run.yaml", server, tmp_path / "run", collections=["main"])
    cfg = load_config(cfg_path)
    reqs = generate.requests(cfg, limit_units=6)
    script.plan(reqs)
    for shard in ("0/3", "1/3", "2/3"):
        for _ in range(4):
            if _run("generate", "--config", str(cfg_path), "--limit-units", "6", "--shard", shard, "--quiet") == 0:
                break
    per_file = {p.name: [r["entry_id"] for r in map(json.loads, p.read_text().splitlines()) if r["ok"]]
                for p in (tmp_path / "run" / "raw").glob("*.jsonl")}
    assert sorted(per_file) == [f"shard-00{i}-of-003.jsonl" for i in range(3)]
    everything = [e for ids in per_file.values() for e in ids]
    assert sorted(everything) == sorted(r.entry_id for r in reqs)
