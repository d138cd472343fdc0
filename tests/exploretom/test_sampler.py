"""Story quality of the sampler (issue 15 item 6) and its steered / unsteered switches."""
import dataclasses
import json
import random

import pytest

from exploretom.cli import main
from exploretom.sampling.action_sets import Conditions
from exploretom.sampling.lexicon import sample_context
from exploretom.sampling.sampler import StorySampler, sample_story
from exploretom.semantics.build import enter, tell
from exploretom.semantics.story import BROADCAST, ENTER, LEAVE, PRIVATE, Action, Topic, parse_action
from exploretom.semantics.tracker import Tracker


def plain(a: Action) -> Action:
    return dataclasses.replace(a, peeking=(), distracted=())


def flaws(actions) -> list[str]:
    """What the constrained sampler forbids, found in a story."""
    out, entered = [], set()
    for i, a in enumerate(actions):
        prev = actions[i - 1] if i else None
        if prev and (prev.type, prev.person, prev.room) == (ENTER, a.person, a.room) \
                and a.type == LEAVE:
            out.append(f"{i + 1}: entered and left")
        if prev and plain(prev) == plain(a):
            out.append(f"{i + 1}: repeated")
        if a.type in (PRIVATE, BROADCAST) and not ({a.person, a.listener} - {""}) <= entered:
            out.append(f"{i + 1}: talk before entering")
        if not set(a.peeking) <= entered:
            out.append(f"{i + 1}: peeker who never entered")
        if a.type == PRIVATE and a.listener in a.distracted:
            out.append(f"{i + 1}: distracted listener")
        if a.type == ENTER:
            entered.add(a.person)
    return out


def stories(aset, n, **kw):
    cond = Conditions(aset, people=3, moves=3, rooms=2, max_actions=12, asymmetric=True)
    return cond, [sample_story(cond, random.Random(f"q{k}"), k, **kw)[0] for k in range(n)]


@pytest.mark.parametrize("aset", ["A4", "A7", "all"])
def test_default_sampler_writes_none_of_the_forbidden_patterns(aset):
    cond, sampled = stories(aset, 60)
    for s in sampled:
        assert flaws(s.actions) == [], (s.id, flaws(s.actions))
        assert cond.is_desired(s.actions) and s.extra["sampler"] == "steered"


def test_unconstrained_sampler_allows_them_as_the_paper_does():
    _, sampled = stories("A4", 60, constrained=False)
    found = {f.split(": ")[1] for s in sampled for f in flaws(s.actions)}
    assert "entered and left" in found
    assert sampled[0].extra["sampler"] == "steered-unconstrained"


def test_unsteered_stories_meet_the_conditions_and_say_how_they_were_sampled():
    cond, sampled = stories("A7", 15, steered=False)
    for s in sampled:
        assert cond.is_desired(s.actions) and flaws(s.actions) == []
        assert s.extra["sampler"] == "unsteered"


def test_each_rule_on_a_readable_story():
    rng = random.Random(0)
    ctx = sample_context(rng, people=3, rooms=2)
    anne, beth = ctx.people[:2]
    kitchen = ctx.rooms[0]
    sampler = StorySampler(Conditions("A7", 3, 3, 2, 12), ctx, rng)
    loose = StorySampler(Conditions("A7", 3, 3, 2, 12), ctx, rng, constrained=False)
    t = Tracker(2)
    chat = Action(PRIVATE, anne, listener=beth, topic=Topic("abstract", topic=ctx.topics[0]))
    # Nobody has entered a room: no one talks yet.
    assert not sampler.allowed(t, chat) and loose.allowed(t, chat)
    t.apply(parse_action(enter(anne, kitchen), 0))
    # "Anne entered the kitchen. Anne left the kitchen." is an immediate undo.
    assert not sampler.allowed(t, Action(LEAVE, anne, room=kitchen))
    assert not sampler.allowed(t, chat)  # Beth has not entered yet
    t.apply(parse_action(enter(beth, kitchen), 1))
    assert sampler.allowed(t, chat)
    t.apply(parse_action(tell(anne, beth, ctx.topics[0]), 2))
    assert not sampler.allowed(t, chat) and loose.allowed(t, chat)  # said twice in a row
    assert sampler.allowed(t, Action(LEAVE, anne, room=kitchen))


@pytest.mark.parametrize("flags, name", [([], "steered"), (["--unsteered"], "unsteered"),
                                         (["--unconstrained"], "steered-unconstrained")])
def test_sample_command_flags(tmp_path, flags, name):
    out = tmp_path / "s.jsonl"
    assert main(["sample", "--action-set", "A1", "--people", "2", "--moves", "2", "--rooms", "2",
                 "--max-actions", "8", "-n", "3", "-q", "-o", str(out), *flags]) == 0
    assert [json.loads(line)["sampler"] for line in out.open()] == [name] * 3


# --------------------------------------------------------------------------- the fast paths
def test_the_fast_desired_tests_agree_with_unmet_on_every_prefix():
    """Conditions.is_desired and the walk's counters (StorySampler._desired) give what
    `not unmet(...)` gives, on every prefix of stories of every action set and sampler."""
    from exploretom.sampling.action_sets import ACTION_SETS
    from exploretom.sampling.sampler import Progress

    rng = random.Random(11)
    for k, aset in enumerate(list(ACTION_SETS) * 6):
        cond = Conditions(aset, 3, 3, 2, 12, asymmetric=k % 2 == 0, max_asymmetric=1 + k % 3)
        sampler = StorySampler(cond, sample_context(rng, 3, 2), rng, steered=k % 3 != 0,
                               constrained=k % 4 != 0)
        t = sampler.walk() or Tracker(2)
        replay, prog = Tracker(2), Progress()
        for a in t.actions:
            replay.apply(a)
            prog.add(a)
            want = not cond.unmet(list(replay.actions))
            assert cond.is_desired(replay.actions) == want
            assert sampler._desired(replay, prog) == want
            for other in (Conditions(aset, 2, 2, 2, 10), Conditions(aset, 3, 3, 2, 12)):
                assert other.is_desired(replay.actions) == (not other.unmet(list(replay.actions)))


def test_the_kind_draw_is_random_choices():
    """The walk draws its kind as Random.choices(kinds, weights)[0] does, number for number."""
    from bisect import bisect
    from itertools import accumulate

    for seed in range(50):
        a, b = random.Random(seed), random.Random(seed)
        for n in range(1, 10):
            kinds = [f"k{j}" for j in range(n)]
            weights = [a.random() * 3 + 0.1 for _ in range(n)]
            for _ in range(n):  # the same draws from b, to keep the two streams together
                b.random()
            cum = list(accumulate(weights))
            assert (kinds[bisect(cum, b.random() * (cum[-1] + 0.0), 0, len(cum) - 1)]
                    == a.choices(kinds, weights)[0])
