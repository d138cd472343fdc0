"""The GRPO rewards: values of eq. 3-5, TRL's calling convention, metrics, and reward hacking."""
import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from eval.answers import tagged
from rl.rewards import (completion_text, format_reward, outcome_reward, total_reward,
                        untagged_outcome_reward)

GOOD = tagged("basket", "Sally was out when the marble moved.")


def call_both(completions, answer, answer_type, choices=(), source="s", meta="{}", log_metric=None):
    n = len(completions)
    kwargs = dict(answer=[answer] * n, answer_type=[answer_type] * n, choices=[list(choices)] * n,
                  source=[source] * n, meta=[meta] * n, id=["x"] * n)
    f = format_reward(prompts=[[]] * n, completions=completions, **kwargs)
    o = outcome_reward(prompts=[[]] * n, completions=completions, log_metric=log_metric, **kwargs)
    return f, o


def test_values_of_the_paper():
    f, o = call_both([GOOD, GOOD.replace("basket", "box"), "basket"], "basket", "short")
    assert f == [0.0, 0.0, -1.0]
    assert o == [1.0, 0.0, 0.0]  # a tagless right answer earns nothing


def test_conversational_completions():
    conv = [[{"role": "assistant", "content": GOOD}]]
    f, o = call_both(conv, "basket", "short")
    assert (f, o) == ([0.0], [1.0])
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]) == "hi"
    assert completion_text(None) == "" and completion_text(42) == ""


def test_choice_and_yes_no():
    f, o = call_both([tagged("B", "t"), tagged("A", "t")],
                     "B", "choice", choices=["in the box", "in the basket"])
    assert o == [1.0, 0.0]
    _, o = call_both([tagged("No", "t"), tagged("yes or no", "t")],
                     "no", "yes_no")
    assert o == [1.0, 0.0]


def test_accuracy_metrics_per_source_and_order():
    logged = []
    call_both([GOOD, GOOD.replace("basket", "box")], "basket", "short", source="exploretom",
              meta=json.dumps({"order": 2}), log_metric=lambda k, v: logged.append((k, v)))
    assert logged.count(("accuracy/source/exploretom", 1.0)) == 1
    assert logged.count(("accuracy/source/exploretom", 0.0)) == 1
    assert ("accuracy/order/2", 1.0) in logged and ("accuracy/order/2", 0.0) in logged
    # no order in meta (or meta unreadable): no order metric, and no exception
    logged.clear()
    call_both([GOOD], "basket", "short", meta="not json", log_metric=lambda k, v: logged.append(k))
    assert logged == ["reading/hedge_or_negation", "accuracy/source/s"]


def test_hedges_and_negations_earn_nothing_and_are_counted():
    """The careful reading in the reward (issue 40): a hedge between answers or a negated answer
    is paid nothing, tagged or not, and each completion logs whether it was one."""
    logged = []
    completions = [tagged("basket", "t"), tagged("basket or box", "t"), tagged("not the basket", "t"),
                   tagged("box, not basket", "t"), tagged("basket, not box", "t"),
                   tagged("box. Actually, basket", "t")]
    f, o = call_both(completions, "basket", "short", meta=json.dumps({"candidates": ["basket", "box"]}),
                     log_metric=lambda k, v: logged.append((k, v)))
    assert f == [0.0] * 6
    assert o == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert [v for k, v in logged if k == "reading/hedge_or_negation"] == [0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    untagged = untagged_outcome_reward(prompts=[[]] * 3, completions=[
        "The basket or the box.", "Not in the basket.", "In the basket, because she left before it moved to the box."],
        answer=["basket"] * 3, answer_type=["short"] * 3, meta=[json.dumps({"candidates": ["basket", "box"]})] * 3)
    assert untagged == [0.0, 0.0, 1.0]


def test_the_question_picks_the_belief_or_the_reality():
    reply = "She thinks it is in the basket, but it is really in the box."
    kwargs = dict(completions=[reply], answer_type=["short"], meta=[json.dumps({"candidates": ["basket", "box"]})])
    belief = [[{"role": "user", "content": "Story...\n\nQuestion: Where will Sally look for the marble?"}]]
    reality = [[{"role": "user", "content": "Story...\n\nQuestion: Where is the marble really?"}]]
    assert untagged_outcome_reward(prompts=belief, answer=["basket"], **kwargs) == [1.0]
    assert untagged_outcome_reward(prompts=reality, answer=["box"], **kwargs) == [1.0]
    assert untagged_outcome_reward(prompts=reality, answer=["basket"], **kwargs) == [0.0]


HACKS = [
    # every option listed
    (tagged("A, B, C, D", "t"), "B", "choice", ["w", "x", "y", "z"]),
    (tagged("A or B", "t"), "B", "choice", ["w", "x"]),
    (tagged("basket, box, drawer", "t"), "basket", "short", []),
    (tagged("yes and no", "t"), "yes", "yes_no", []),
    # two answer blocks (same or different), or two think blocks
    ("<think>t</think><answer>B</answer><answer>B</answer>", "B", "choice", ["w", "x"]),
    ("<think>t</think><answer>A</answer><answer>B</answer>", "B", "choice", ["w", "x"]),
    ("<think>t</think><think>u</think><answer>B</answer>", "B", "choice", ["w", "x"]),
    # the answer outside the tags
    ("<think>t</think> The answer is B.", "B", "choice", ["w", "x"]),
    ("<think>t</think><answer></answer> B", "B", "choice", ["w", "x"]),
    ("B <think>t</think><answer>unsure</answer>", "B", "choice", ["w", "x"]),
    ("<think>t<answer>B</answer></think>", "B", "choice", ["w", "x"]),
    # empty answer
    (tagged("   ", "t"), "basket", "short", []),
    (tagged(""), "yes", "yes_no", []),
    # enormous outputs
    ("<think>t</think><answer>" + "basket " * 200_000 + "</answer>", "basket", "short", []),
    ("<think>" + "x" * 1_000_000 + "</think><answer>" + "B " * 100_000 + "</answer>", "B", "choice", ["w", "x"]),
    (tagged("42", "t") + " 42" * 300_000, "42", "number", []),
]


def test_reward_hacking_gets_no_outcome_credit():
    for text, gold, kind, choices in HACKS:
        start = time.perf_counter()
        _, o = call_both([text], gold, kind, choices)
        assert o == [0.0], text[:80]
        assert time.perf_counter() - start < 5, f"too slow on {text[:40]}"


TAGS = ["<think>", "</think>", "<answer>", "</answer>"]
pieces = st.one_of(st.sampled_from(TAGS), st.text(max_size=30),
                   st.sampled_from(["B", "basket", "yes", "no", "42", "A, B", " ", "\n"]))
completions = st.one_of(
    st.text(max_size=300),
    st.lists(pieces, max_size=12).map("".join),
    st.builds(lambda t, a: tagged(a, t), st.text(max_size=50), st.text(max_size=30)),
)
rows = st.one_of(
    st.tuples(st.sampled_from("ABCD"), st.just("choice"), st.just(["w", "x", "y", "z"])),
    st.tuples(st.sampled_from(["yes", "no"]), st.just("yes_no"), st.just([])),
    st.tuples(st.sampled_from(["basket", "Sally", "green box"]), st.just("short"), st.just([])),
    st.tuples(st.sampled_from(["knows about it", "does not know about it"]), st.just("knowledge"), st.just([])),
    st.tuples(st.sampled_from(["42", "0.5", "-3"]), st.just("number"), st.just([])),
)


@settings(max_examples=300, deadline=None)
@given(completions, rows)
def test_total_reward_is_in_the_paper_range_and_never_raises(text, row):
    gold, kind, choices = row
    f, o = call_both([text, [{"role": "assistant", "content": text}]], gold, kind, choices)
    assert f[0] == f[1] and o[0] == o[1]
    assert f[0] + o[0] in (-1.0, 0.0, 1.0)
    assert total_reward(text, gold, kind, choices) == f[0] + o[0]
    if f[0] == -1.0:
        assert o[0] == 0.0  # a broken format never earns the outcome reward


def test_untagged_outcome_reads_answers_as_evaluation_does():
    # issue 30 item 3: a policy that does not write the tags yet (a real instruct model) is
    # rewarded for the answer it gave when the run says so; the format reward still asks for tags
    from types import SimpleNamespace

    from rl.rewards import reward_functions

    meta = json.dumps({"candidates": ["kitchen", "red_box", "green_basket"]})
    replies = ["Sally will look for the apple in the red_box.", "The apple is in the green_basket.",
               "I cannot tell.", tagged("red_box", "she left")]
    kw = dict(answer=["red_box"] * 4, answer_type=["short"] * 4, meta=[meta] * 4)
    assert outcome_reward([""] * 4, replies, **kw) == [0.0, 0.0, 0.0, 1.0]  # the paper's
    assert outcome_reward([""] * 4, replies, untagged=True, **kw) == [1.0, 0.0, 0.0, 1.0]
    cfg = SimpleNamespace(reward=SimpleNamespace(
        untagged_outcome=True, format_weight=1.0, outcome_weight=1.0, overlong_buffer=None,
        trace_weight=0.0), grpo=None)
    funcs, _ = reward_functions(cfg)
    assert funcs[1].__name__ == "outcome_reward"  # TRL logs it under the usual name
    assert funcs[1]([""] * 4, replies, **kw) == [1.0, 0.0, 0.0, 1.0]
    assert format_reward([""] * 4, replies) == [-1.0, -1.0, -1.0, 0.0]
