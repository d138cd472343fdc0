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
