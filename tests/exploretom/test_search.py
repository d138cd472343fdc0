"""Scripted reasoners, targets, the A* search, the baseline and the search commands."""
import json
import random
import re

import pytest

from eval.answers import tagged
from exploretom.cli import main
from exploretom.sampling.action_sets import Conditions
from exploretom.sampling.lexicon import sample_context
from exploretom.search.astar import (AStarSearch, Evaluator, Node, SearchConfig,
                                     overgenerate_and_filter, score_all)
from exploretom.search.reasoners import lapsed
from exploretom.search.targets import ModelTarget, ReasonerTarget, Target, is_correct
from exploretom.semantics.build import enter, leave, put
from exploretom.semantics.label import label_story, track
from exploretom.semantics.questions import generate_questions
from exploretom.semantics.story import parse_story

SALLY = parse_story({"id": "s", "actions": [
    enter("Sally", "kitchen"), enter("Anne", "kitchen"), put("Sally", "marble", "basket"),
    leave("Sally", "kitchen"), put("Anne", "marble", "box")]})
# Anne moves the marble while Sally peeks: Anne wrongly thinks Sally still believes "basket".
PEEK = parse_story({"id": "p", "actions": [
    enter("Sally", "kitchen"), enter("Anne", "kitchen"), put("Sally", "marble", "basket"),
    leave("Sally", "kitchen"), put("Anne", "marble", "box", peeking=["Sally"])]})


def answers(story, reasoner):
    t = track(story)
    target = ReasonerTarget(reasoner)
    return {q["question"]: r for q, r in zip(generate_questions(t),
                                            target.answer_items(t, generate_questions(t)))}


SALLY_Q = "In which container will Sally search for the marble?"
ANNE_SALLY_Q = "In which container does Anne think that Sally will search for the marble?"
BEGIN_Q = "In which container was the marble at the beginning?"


def test_reasoners_have_their_documented_biases():
    assert answers(SALLY, "perfect")[SALLY_Q] == "basket"
    assert answers(SALLY, "world")[SALLY_Q] == "box"  # ignores beliefs
    assert answers(SALLY, "world")[BEGIN_Q] == "basket"  # but reads the story right
    assert answers(SALLY, "last_mention")[SALLY_Q] == "box"
    assert answers(SALLY, "last_mention")[BEGIN_Q] == "box"  # last mention, not memory
    assert answers(SALLY, "first_order")[SALLY_Q] == "basket"
    # first_order ignores nesting: it answers with Sally's own (peeked, true) belief.
    assert answers(PEEK, "first_order")[ANNE_SALLY_Q] == "box"
    assert label_story(PEEK)["questions"][-1]["question"] == ANNE_SALLY_Q
    assert answers(PEEK, "perfect")[ANNE_SALLY_Q] == "basket"


@pytest.mark.parametrize("reasoner", ["perfect", "world", "first_order", "last_mention",
                                      "lapses"])
def test_perfect_reasoner_is_always_right_and_others_fail_only_where_biased(reasoner):
    t = track(SALLY)
    qs = generate_questions(t)
    correct = [is_correct(r, q) for q, r in zip(qs, ReasonerTarget(reasoner).answer_items(t, qs))]
    if reasoner == "perfect":
        assert all(correct)
    if reasoner == "world":  # wrong exactly on false-belief questions
        assert [not c for c in correct] == [q["false_belief"] for q in qs]


def _sally_anne(a, b, obj):
    return parse_story({"id": "s", "actions": [
        enter(a, "kitchen"), enter(b, "kitchen"), put(a, obj, "basket"), leave(a, "kitchen"),
        put(b, obj, "box")]})


def test_lapses_reader_answers_as_if_the_missed_action_never_happened():
    # With these names the hash makes the reader miss exactly "Sally left the kitchen":
    # for it Sally saw Chen move the coin, so she will search the box (the label: basket).
    story = _sally_anne("Sally", "Chen", "coin")
    assert lapsed(tuple(story.actions)) == [3]
    q = "In which container will Sally search for the coin?"
    assert answers(story, "lapses")[q] == "box" and answers(story, "perfect")[q] == "basket"
    # Nothing missed: the reader is perfect.
    clean = _sally_anne("Sally", "Chen", "marble")
    assert lapsed(tuple(clean.actions)) == []
    assert answers(clean, "lapses") == answers(clean, "perfect")


def test_lapses_of_a_prefix_persist_in_its_continuations():
    sampler = _search(Conditions("A2", 3, 3, 2, 15), ReasonerTarget("lapses")).sampler
    stories = [t for t in (sampler.walk() for _ in range(40)) if t is not None]
    missed = 0
    for t in stories:
        actions = tuple(t.actions)
        for k in range(len(actions) + 1):
            assert lapsed(actions[:k]) == [i for i in lapsed(actions) if i < k]
        missed += len(lapsed(actions))
    read = sum(len(t.actions) for t in stories)
    assert len(stories) >= 30 and 0.05 < missed / read < 0.3  # about one action in seven


def test_scoring_modes_strict_and_lenient():
    q = {"answer": "no", "answer_type": "yes_no"}
    assert not is_correct("I know", q, "strict")
    assert is_correct("I know", q, "lenient")  # the paper's substring match: "no" in "know"
    box = {"answer": "box", "answer_type": "short"}
    assert is_correct("The box.", box) and not is_correct("box or basket", box)


class CountingTarget(Target):
    name = "counting"

    def __init__(self):
        self.calls, self.items = 0, 0
        self.inner = ReasonerTarget("world")

    def answer(self, items):
        self.calls += 1
        self.items += len(items)
        return self.inner.answer(items)


def _search(cond, target, seed=0, **cfg):
    ctx = sample_context(random.Random(seed), cond.people, cond.rooms)
    return AStarSearch(cond, ctx, target, SearchConfig(**cfg), random.Random(seed))


def test_evaluator_batches_all_nodes_in_one_call_and_caches_by_story():
    cond = Conditions("A1", 3, 3, 1, 12)
    target = CountingTarget()
    search = _search(cond, target, continuations=5)
    nodes = [Node(search.sampler.walk()) for _ in range(4)]
    search.evaluator.evaluate(nodes)
    assert target.calls == 1 and target.items == sum(n.scored for n in nodes)
    search.evaluator.evaluate(nodes)  # cached: no new call, no new charge
    assert target.calls == 1 and search.evaluator.calls == 4


class RamblingTarget(Target):
    """Right on every other question; on the rest an answer nobody can read."""
    name = "rambling"

    def answer(self, items):
        return [it.question["answer"] if i % 2 else "Well, that depends on many things, let me think."
                for i, it in enumerate(items)]


def test_unreadable_answers_count_as_mistakes_or_are_left_out_of_g():
    cond = Conditions("A1", 3, 3, 1, 12)
    wrong = _search(cond, RamblingTarget(), continuations=5)
    node = Node(wrong.sampler.walk())
    wrong.evaluator.evaluate([node])
    asked = len(wrong.evaluator.scored_questions(node.tracker))
    assert node.scored == asked and node.wrong == asked // 2 + asked % 2 and node.g < 0.6
    skip = _search(cond, RamblingTarget(), continuations=5, unreadable="skip")
    same = Node(node.tracker)
    skip.evaluator.evaluate([same])
    assert same.scored == asked // 2 and same.wrong == 0 and same.g == 1.0
    with pytest.raises(ValueError, match="search.unreadable"):
        SearchConfig(unreadable="ignore")


def test_astar_finds_a_goal_within_budget_against_the_world_reasoner():
    cond = Conditions("A1", 3, 3, 2, 12)
    result = _search(cond, ReasonerTarget("world"), seed=3, budget=30, continuations=10).run()
    assert result.found and result.evaluations <= 30
    assert cond.is_desired(result.tracker.actions)
    assert result.accuracy < 1.0
    scored = [q for q in score_all(result.tracker, ReasonerTarget("world"))
              if q["order"] == 1]
    assert result.accuracy == pytest.approx(sum(q["correct"] for q in scored) / len(scored))


def test_textbook_astar_stops_at_the_first_goal():
    cond = Conditions("A1", 2, 2, 1, 9)
    anytime = _search(cond, ReasonerTarget("world"), seed=1, budget=40, continuations=5).run()
    first = _search(cond, ReasonerTarget("world"), seed=1, budget=40, continuations=5,
                    anytime=False).run()
    assert first.found and first.evaluations <= anytime.evaluations


def test_baseline_spends_its_budget_on_desired_stories_and_keeps_the_hardest():
    cond = Conditions("A1", 3, 3, 2, 12)
    ctx = sample_context(random.Random(0), 3, 2)
    result = overgenerate_and_filter(cond, ctx, ReasonerTarget("world"),
                                     SearchConfig(budget=20), random.Random(0))
    assert result.evaluations == 20 and cond.is_desired(result.tracker.actions)


def test_model_target_through_an_openai_compatible_server(monkeypatch):
    from eval.backends import load_backend
    from eval.backends.fake_server.server import FakeServer

    def reply(request):  # a "model" that always says the basket
        return "The basket."

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    with FakeServer(reply) as srv:
        backend = load_backend("openai", "fake-model", base_url=srv.openai_base_url)
        target = ModelTarget(backend)
        scored = score_all(track(SALLY), target)
        assert srv.stats["requests"] >= len(scored)
    by_q = {q["question"]: q for q in scored}
    assert by_q[SALLY_Q]["correct"] and not by_q["In which container is the marble now?"]["correct"]
    assert by_q[SALLY_Q]["response"] == "The basket."


GRID = """
target: {kind: reasoner, name: world}
methods: [astar, baseline]
stories_per_setting: 2
seed: 1
grid: {action_sets: [A1, A4], asymmetric: [false], people: [2], moves: [2], rooms: [1],
       max_actions: 8}
search: {budget: 6, continuations: 4}
"""


def test_search_command_writes_records_skips_infeasible_and_resumes(tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(GRID)
    out = tmp_path / "run.jsonl"
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    # once, as a count (the paper grid has 18 infeasible settings: no line for each)
    assert err.count("infeasible") == 1 and "skipped 1 infeasible setting(s), e.g. A4 p2 m2 r1" in err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == [
        "astar-A1-p2-m2-r1-n8-000", "astar-A1-p2-m2-r1-n8-001",
        "baseline-A1-p2-m2-r1-n8-000", "baseline-A1-p2-m2-r1-n8-001"]
    for r in records:
        assert r["target"] == "reasoner:world" and r["evaluations"] <= 6
        assert {"response", "correct"} <= set(r["questions"][0])
        assert r["setting"]["action_set"] == "A1" and 0 <= r["accuracy"] <= 1
    # Paired comparison: A* and the baseline search the same context for the same story index.
    by_id = {r["id"]: r for r in records}
    assert by_id["astar-A1-p2-m2-r1-n8-000"]["context"] == \
        by_id["baseline-A1-p2-m2-r1-n8-000"]["context"]
    # A killed run: keep one line and half of the next, then re-run.
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][:40])
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in again) == sorted(by_id)
    # The report command reads the records.
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.md").exists()


def test_search_config_errors_are_one_line(tmp_path, capsys):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(GRID.replace("budget: 6", "budget: 0"))
    assert main(["search", "--config", str(cfg), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {cfg}:8: search.budget must be >= 1, got 0"
    cfg.write_text(GRID.replace("seed: 1", "seeed: 1"))
    assert main(["search", "--config", str(cfg), "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {cfg}:5: seeed: unknown field; allowed: target, methods")
    assert "\n" not in err


SUMMARY = re.compile(
    r"target=(\S+) search_acc=([01]\.\d{4}) pooled_baseline_acc=([01]\.\d{4}) "
    r"block_baseline_acc=([01]\.\d{4}) diff_points=([+-]\d+\.\d) ci_low=([+-]\d+\.\d) "
    r"ci_high=([+-]\d+\.\d) settings=(\d+) seeds=(\d+)")


def test_bench_search_prints_the_summary_line(tmp_path, capsys):
    out = tmp_path / "b.jsonl"
    args = ["bench-search", "--target", "world", "--settings", "2", "--stories", "2",
            "--budget", "15", "--seeds", "2", "--search", "continuations=5", "--seed", "0",
            "-q", "-o", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out.strip()
    line, *rest = printed.splitlines()
    # the world reasoner says "" where it does not know: read as no answer, counted apart
    assert len(rest) == 1 and re.fullmatch(
        r"unparsed astar=0\.\d{4} baseline=0\.\d{4} block_baseline=0\.\d{4}", rest[0])
    m = SUMMARY.fullmatch(line)
    assert m and m[1] == "world" and m[8] == "2" and m[9] == "2"
    x, y = float(m[2]), float(m[3])
    assert float(m[5]) == pytest.approx(round(100 * (y - x), 1), abs=0.051)
    assert float(m[6]) <= float(m[5]) <= float(m[7])
    records = [json.loads(r) for r in out.read_text().splitlines()]
    assert {r["method"] for r in records} == {"astar", "baseline", "block_baseline"}
    assert len({r["id"] for r in records}) == len(records)
    # Run twice: resumed from the file, nothing duplicated, the same line.
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == printed
    assert out.read_text().count("\n") == len(records)
    # Other options on the same file: refused; --overwrite starts over.
    assert main([*args[:-2], "--budget", "14", "-o", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert out.read_text().count("\n") == len(records)
    # The report reads the records.
    assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0


@pytest.mark.parametrize("flag", ["--settings", "--budget"])
def test_bench_search_refuses_a_count_below_one_in_one_line(flag, capsys):
    """--settings 0 would compare nothing and --budget 0 would search nothing: usage errors."""
    with pytest.raises(SystemExit) as stop:
        main(["bench-search", "--target", "world", flag, "0"])
    assert stop.value.code == 2
    assert f"{flag}: expected an integer >= 1, got '0'" in capsys.readouterr().err


def test_search_floor_measures_on_the_contexts_bench_search_compares_on():
    from exploretom.search_floor import floor
    from exploretom.search.run import run_one, bench_settings

    # 50 random stories in the baseline's own context and stream are exactly the baseline's
    # candidates, so the floor's only best-of-50 block is the baseline's pick.
    cond = bench_settings(1, 0)[0]
    base = run_one("baseline", cond, ReasonerTarget("world"), SearchConfig(), 0, 0, "b")
    f = floor("world", 1, 50, 0, (1,), quiet=True)
    assert f["best_of_50"] == f["min"] == base["accuracy"]
    f = floor("world", 2, 100, 0, (1,), quiet=True)
    assert 0 <= f["min"] <= f["best_of_50"] <= f["mean"] <= 1
    assert floor("perfect", 2, 50, 0, (1,), quiet=True) == {"mean": 1, "best_of_50": 1, "min": 1}


def test_search_with_a_lexicon_of_ones_own(tmp_path, capsys):
    from exploretom.sampling.lexicon import load_lexicon

    builtin = load_lexicon()
    small = {"version": 1, "names": ["Ada", "Bo", "Cy"],
             "settings": [s for s in builtin["settings"] if s["id"] == "bakery"]}
    (tmp_path / "lex.json").write_text(json.dumps(small))
    cfg = tmp_path / "run.yaml"
    cfg.write_text(GRID + "lexicon: lex.json\n")  # relative to the config's folder
    out = tmp_path / "run.jsonl"
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 4
    capsys.readouterr()
    for r in records:
        assert r["context"]["setting"] == "bakery"
        assert {p["name"] for p in r["context"]["people"]} <= {"Ada", "Bo", "Cy"}
    cfg.write_text(GRID + "lexicon: missing.json\n")
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        f"error: {cfg}: lexicon: no such file {tmp_path / 'missing.json'}"
    (tmp_path / "lex.json").write_text(json.dumps({"names": []}))
    cfg.write_text(GRID + "lexicon: lex.json\n")
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: {cfg}: lexicon {tmp_path / 'lex.json'}: not a lexicon") \
        and "\n" not in err


def test_search_in_a_small_world_cut_from_the_builtin_lexicon(tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(GRID + "settings: [bakery, hospital]\nnames: [Ada, Bo]\n")
    out = tmp_path / "run.jsonl"
    assert main(["search", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    for line in out.read_text().splitlines():
        r = json.loads(line)
        assert r["context"]["setting"] in ("bakery", "hospital")
        assert {p["name"] for p in r["context"]["people"]} == {"Ada", "Bo"}
    capsys.readouterr()
    for extra, message in [
        ("settings: [bakery, moon_base]\n", "settings: unknown setting(s) ['moon_base']"),
        ("names: [Ada]\n", "names: 1 distinct name(s), but the grid asks for up to 2"),
    ]:
        cfg.write_text(GRID + extra)
        assert main(["search", "--config", str(cfg), "-o", str(tmp_path / "o.jsonl")]) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith(f"error: {cfg}: {message}")


def test_targets_read_untagged_answers_against_the_story_and_say_how():
    # issue 30 item 3: the search scores a model that does not write tags with the eval reader,
    # the story's places and containers as the candidates, and says which replies it could not read
    from exploretom.semantics.label import validate
    from exploretom.search.targets import candidates, judge

    t = validate({"id": "s", "actions": [enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                                         put("Anne", "apple", "basket")]}, max_order=1)
    q = {"answer": "basket", "answer_type": "short"}
    assert set(candidates(t)) == {"kitchen", "box", "basket"}
    assert judge("Anne will look for the apple in the basket.", q, tracker=t) == (True, "fallback")
    assert judge("The apple was in the box, then the basket.", q, tracker=t) == (False, "none")
    assert judge(tagged("box", "x"), q, tracker=t) == (False, "tag")
    assert judge("the basket, I think", q, mode="lenient", tracker=t)[0]
