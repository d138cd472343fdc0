"""The local-model target of bench-search (`--target hf:PATH`) and its throughput bench."""
from __future__ import annotations

import pytest

from exploretom.bench_target import bench_items, main
from exploretom.search.targets import parse_target

DEMO_WORLD = "configs/exploretom/demo.yaml"


def test_hf_target_shares_prefixes_with_the_row_prompt():
    spec = parse_target("hf:runs/demo/sft")
    assert spec == {"kind": "hf", "model": "runs/demo/sft", "prompt": "row", "batch_size": 64,
                    "share_prefixes": True, "max_new_tokens": 24}
    assert parse_target("hf:m", batch_size=8)["batch_size"] == 8


def test_bench_items_are_whole_stories_of_the_world():
    items = bench_items(60, DEMO_WORLD, (1, 2))
    assert len(items) == 60 and {it.question["order"] for it in items} <= {1, 2}
    texts = [it.text for it in items]
    # a story's questions come together, as the search sends them
    assert all(texts.index(t) == i or texts[i - 1] == t for i, t in enumerate(texts))
    assert len(set(texts)) > 2 and bench_items(60, DEMO_WORLD, (1, 2))[-1].text == texts[-1]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("transformers")
    from rl.tiny_model import build_tiny_model

    items = bench_items(30, DEMO_WORLD, (0, 1, 2))
    corpus = [it.text for it in items] + [it.question["question"] for it in items]
    return build_tiny_model(corpus, tmp_path_factory.mktemp("tiny"), vocab_size=400,
                            hidden_size=64, num_layers=2, num_heads=2, num_kv_heads=1)


def test_bench_target_compares_the_plain_path(tiny_model, capsys):
    assert main(["--target", f"hf:{tiny_model}", "-n", "40", "--batch-size", "16", "--compare"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [f"target=hf:{tiny_model}"] * 2 + [
        "same_answers=40/40"]
    fields = [dict(kv.split("=", 1) for kv in line.split()) for line in lines[:2]]
    assert [f["share_prefixes"] for f in fields] == ["false", "true"]
    assert all(f["questions"] == "40" and float(f["questions_per_s"]) > 0 for f in fields)
    assert fields[0]["omp_threads"].isdigit() and "load_average" in fields[0]
    # how the answers were read adds up, and the two runs read them alike
    for f in fields:
        assert abs(sum(float(f[k]) for k in ("read_tag", "read_fallback", "unread")) - 1) < 0.01
    assert fields[0]["accuracy"] == fields[1]["accuracy"]


def test_local_model_targets_of_every_backend():
    assert parse_target("vllm:m", prompt="paper") == {
        "kind": "vllm", "model": "m", "prompt": "paper", "max_new_tokens": 24, "dtype": "float32",
        "max_model_len": 4096, "enable_prefix_caching": True}
    assert parse_target("served:m")["kind"] == "served"
    with pytest.raises(ValueError, match="target prompt"):
        parse_target("hf:m", prompt="chat")
    with pytest.raises(SystemExit):
        main(["--target", "openai:m", "-n", "4"])
