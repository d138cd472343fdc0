"""launch/transfer_report.py's reading of gains: a gain that a one-letter habit or an unreadable
base explains is said to be one, with figures a reader can check by hand."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "launch"))
import transfer_report  # noqa: E402


def _bench(base_unread, sft_top, verdict):
    per = {
        "base": {"read": {"tag": 0.0, "fallback": 1 - base_unread, "unparsed": base_unread},
                 "top_position": "A", "top_position_share": 0.6, "chance": 0.25},
        "sft": {"read": {"tag": 1.0, "fallback": 0.0, "unparsed": 0.0}, "top_position": "A",
                "top_position_share": sft_top, "chance": 0.25},
    }
    return {"checkpoints": per, "paired": {"sft-base": {"verdict": verdict}}}


def test_gains_explained_by_a_habit_or_an_unreadable_base_are_named():
    summary = {"benchmarks": {
        "habit": _bench(0.0, 1.0, "gain"),          # every answer A: the chance level
        "unread": _bench(0.6, 0.4, "gain"),         # 60% of the base's replies unread
        "real": _bench(0.1, 0.5, "gain"),           # neither: a gain to take as it is
        "flat": _bench(0.9, 1.0, "no change"),      # no gain: nothing to explain
    }}
    notes = transfer_report.caveats(summary, ["base", "sft"])
    assert set(notes) == {"habit", "unread"}
    assert notes["habit"] == ["one option position (sft A 100%), a habit that scores about the "
                              "chance level (25.0) over the option orders"]
    assert notes["unread"] == ["the base's replies were unreadable on 60% (scored wrong), so "
                               "any readable answer gains"]


def _paired(diff, lo, hi):
    return {"paired": {"sft-base": {"diff": diff, "ci_low": lo, "ci_high": hi,
                                    "verdict": "gain" if lo > 0 else "loss" if hi < 0 else "no change"}}}


def test_goals_take_each_benchmarks_points_and_need_the_interval_above_zero():
    summary = {"benchmarks": {"tomi": _paired(0.16, 0.05, 0.27), "hitom": _paired(0.09, -0.01, 0.19),
                              "bigtom": _paired(-0.04, -0.07, -0.01)}}
    g = transfer_report.goals(summary, ["base", "sft"], {"tomi": 15, "hitom": 8, "opentom": 5})
    assert g["gains"]["tomi"]["met"] is True                 # +16 >= 15, interval from +5
    assert g["gains"]["hitom"]["met"] is False               # +9 >= 8 but the interval reaches -1
    assert g["gains"]["opentom"] == {"goal_points": 5}       # not evaluated
    assert g["fell"] == ["bigtom"] and g["met"] is False
    lines = transfer_report.goal_lines({"goals": g})
    assert lines[2] == "| ToMi | +16.0 | +5.0 to +27.0 | +15 | **yes** |"
    assert lines[3] == "| Hi-ToM | +9.0 | -1.0 to +19.0 | +8 | no |"
    assert lines[4] == "| OpenToM | – | not evaluated | +5 | no |"
    assert lines[-2] == "Benchmarks that fell beyond their interval: BigToM."


def _group(n, base, sft):
    return {"n": n, "models": {"base": {"n": n, "accuracy": base}, "sft": {"n": n, "accuracy": sft}}}


def test_a_gain_on_true_beliefs_alone_is_called_the_true_place_shortcut():
    groups = {"reality": _group(10, 0.4, 0.4), "memory": _group(10, 0.5, 0.9),
              "belief, order 1": _group(30, 0.3, 0.6),  # pooled rows are not counted twice
              "true belief, order 1": _group(20, 0.3, 0.9), "true belief, order 2": _group(20, 0.4, 0.8),
              "false belief, order 1": _group(10, 0.2, 0.2), "false belief, order 2": _group(30, 0.1, 0.1)}
    kinds = transfer_report.belief_kinds(groups, ["base", "sft"])
    assert abs(kinds["true belief"]["base"] - 0.35) < 1e-9 and abs(kinds["true belief"]["sft"] - 0.85) < 1e-9
    assert abs(kinds["false belief"]["base"] - 0.125) < 1e-9 and kinds["memory"]["sft"] == 0.9
    verdict = transfer_report.kind_verdict(kinds, ["base", "sft"])
    assert verdict.startswith("The gain is on true beliefs (+50.0 points) and not on false beliefs (+0.0)")
    assert "where the object really is" in verdict and "last container" not in verdict
    # ToMi: the last container named is the true place of every true-belief question
    for name in ("true belief, order 1", "true belief, order 2"):
        groups[name]["shortcuts"] = {"last": 1.0, "true_place": 1.0}
    last = transfer_report.shortcut_accuracy(groups, "true belief", "last")
    assert last == 1.0 and transfer_report.shortcut_accuracy(groups, "memory", "last") is None
    assert transfer_report.kind_verdict(kinds, ["base", "sft"], last).endswith(
        "Here that is also the last container the story names (right on 100% of the true-belief questions).")
    groups["true belief, order 2"]["shortcuts"]["last"] = 0.1  # Hi-ToM-like: pooled 0.55, not named
    assert "last container" not in transfer_report.kind_verdict(
        kinds, ["base", "sft"], transfer_report.shortcut_accuracy(groups, "true belief", "last"))
    groups["false belief, order 2"] = _group(30, 0.1, 0.5)
    kinds = transfer_report.belief_kinds(groups, ["base", "sft"])
    assert "not on true beliefs alone" in transfer_report.kind_verdict(kinds, ["base", "sft"])


def test_a_goal_that_is_not_name_equals_points_is_one_error_line(capsys):
    import pytest

    with pytest.raises(SystemExit):
        transfer_report.main(["--out", "x", "--goal", "tomi"])
    assert "--goal takes NAME=POINTS (e.g. tomi=15), got 'tomi'" in capsys.readouterr().err


def test_the_thinks_section_appears_only_where_a_checkpoint_thinks():
    from eval.think_report import think_table

    story = "Anna entered the den.\nThe key is in the box.\nAnna exited the den."
    prompt = [{"role": "user", "content": f"Story:\n{story}\n\nQuestion: Where is the key?"}]
    said = "<think>Step 2: The key is in the box. Anna saw it.\nSo ...</think><answer>box</answer>"
    s = {"checkpoints": ["base", "sft"], "benchmarks": {},
         "goals": {"final": "sft", "against": "base", "gains": {}, "fell": [], "met": False},
         "thinks": {"base": {"tomi": think_table([{"id": "1", "prompt": prompt,
                                                    "response": "box", "correct": True}], "tomi")},
                    "sft": {"tomi": think_table([{"id": "1", "prompt": prompt, "response": said,
                                                   "correct": True}], "tomi")}}}
    md = transfer_report.markdown(s, [])
    assert "## What the thinks hold" in md
    assert "| sft | tomi | 1 | 100 | 0 | 0 | 0 | 100 | - |" in md
    assert "| sft | 1 | 0 | 0 | 1 | 100 | saw it 100% of 1 |" in md
    s["thinks"]["sft"] = s["thinks"]["base"]
    assert "What the thinks hold" not in transfer_report.markdown(s, [])
