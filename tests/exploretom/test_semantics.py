"""One test per rule of SEMANTICS.md, each on a short story a person can check by reading it.

Every story is printed in the test's docstring-like comment as its canonical text.
"""
import pytest

from exploretom.semantics.build import announce, carry, enter, leave, put, tell, update
from exploretom.semantics.label import label_story, track
from exploretom.semantics.story import parse_story
from exploretom.semantics.tracker import Away, StoryError


def story(*actions):
    return parse_story({"id": "t", "actions": list(actions)})


def labels(*actions, max_order=2):
    return label_story(story(*actions), max_order)


def ask(labelled, question):
    """The question's record, or None when the question is not asked (answer unknown)."""
    found = [q for q in labelled["questions"] if q["question"] == question]
    assert len(found) <= 1, f"question asked twice: {question}"
    return found[0] if found else None


def answer(labelled, question):
    q = ask(labelled, question)
    return q and q["answer"]


SALTED = dict(obj="apple", state_value="is salted", visible=False, state_type="<is_salted>")


def salt(person, **mods):
    return update(person, "apple", "is salted", f"{person} salted the apple.", False,
                  "<is_salted>", **mods)


def peel(person, **mods):
    return update(person, "apple", "is peeled", f"{person} peeled the apple.", True,
                  "<is_peeled>", **mods)


# --------------------------------------------------------------------------- STORY_FORMAT.md
def test_story_format_example_sally_anne():
    # Sally entered the kitchen. Anne entered the kitchen. Sally moved the marble to the basket.
    # Sally left the kitchen. Anne moved the marble to the box.
    out = labels(enter("Sally", "kitchen"), enter("Anne", "kitchen"),
                 put("Sally", "marble", "basket"), leave("Sally", "kitchen"),
                 put("Anne", "marble", "box"))
    sally = ask(out, "In which container will Sally search for the marble?")
    assert sally["answer"] == "basket" and sally["false_belief"] and sally["interesting"]
    assert sally["order"] == 1 and sally["people"] == ["Sally"] and sally["kind"] == "belief"
    assert answer(out, "In which container will Anne search for the marble?") == "box"
    second = ask(out, "In which container does Anne think that Sally will search for the marble?")
    assert second["answer"] == "basket" and second["people"] == ["Anne", "Sally"]
    assert answer(out, "In which container was the marble at the beginning?") == "basket"
    assert answer(out, "In which container is the marble now?") == "box"
    assert out["text"].splitlines()[2] == ("Sally moved the marble to the basket, which is also "
                                           "located in the kitchen.")


def test_story_format_example_secret_witness():
    # Anne and Beth entered the kitchen. Anne left. Beth salted the apple (invisible);
    # Anne witnessed this in secret.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), leave("Anne", "kitchen"),
                 salt("Beth", peeking=["Anne"]))
    assert answer(out, "Does Anne believe that the apple is salted? Answer yes or no.") == "yes"
    q = ask(out, "Does Beth believe that Anne believes that the apple is salted? Answer yes or no.")
    # Beth has no idea what Anne believes about the salt: ignorance, not a false belief.
    assert q["answer"] == "no" and not q["false_belief"] and q["order"] == 2
    assert "Anne witnessed this action in secret" in out["text"]


# --------------------------------------------------------------------------- the paper
def test_appendix_a1_leave_semantics():
    # Anne, Beth and Carl are in the kitchen; Carl leaves; then Beth leaves while only Anne sees.
    t = track(story(enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
                    leave("Carl", "kitchen"), leave("Beth", "kitchen")))
    at_beth = ("at", "Beth")
    assert t.belief((), at_beth) is None  # in no room
    assert t.belief(("Anne",), at_beth) == Away("kitchen")  # witness: b1 = not kitchen
    assert t.belief(("Carl",), at_beth) == "kitchen"  # not a witness: assumes she is still there
    assert t.belief(("Beth",), at_beth) == Away("kitchen")
    assert t.belief(("Anne", "Beth"), at_beth) == Away("kitchen")  # witness about witness
    assert t.belief(("Anne", "Carl"), at_beth) == "kitchen"  # witness about non-witness
    assert t.belief(("Carl", "Anne"), at_beth) == "kitchen"  # non-witness: nothing happened
    # Leaving the room changes no belief about objects: nothing to ask about.
    assert not [q for q in label_story(story(enter("Anne", "kitchen"), leave("Anne", "kitchen")))
                ["questions"]]


def test_paper_table_11_story():
    out = labels(enter("David", "study room"), enter("Sarah", "study room"),
                 put("Sarah", "prototype model", "metal filing cabinet"),
                 leave("David", "study room"), enter("Mark", "study room"),
                 put("Mark", "prototype model", "wooden chest"))
    q = "In which container will {} search for the prototype model?"
    assert answer(out, q.format("David")) == "metal filing cabinet"
    assert answer(out, q.format("Sarah")) == "wooden chest"
    assert answer(out, q.format("Mark")) == "wooden chest"
    assert ask(out, q.format("David"))["false_belief"]
    # Sarah watched Mark: each knows the other saw the model go into the chest.
    assert answer(out, "In which container does Sarah think that Mark will search for the "
                       "prototype model?") == "wooden chest"
    assert answer(out, "In which container does Mark think that Sarah will search for the "
                       "prototype model?") == "wooden chest"
    # Mark never met David: what David believes is unknown to him, so it is not asked.
    assert ask(out, "In which container does Mark think that David will search for the "
                    "prototype model?") is None


# --------------------------------------------------------------------------- who sees what
def test_witnesses_are_the_people_in_the_actors_room():
    # Beth is in the bedroom when Anne moves the apple in the kitchen: she sees nothing.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 enter("Beth", "bedroom"), put("Anne", "apple", "basket"))
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "box"


def test_nobody_updates_a_belief_about_a_peekers_belief():
    # Beth peeks at Anne's move: Beth knows, Anne thinks Beth does not, Beth knows Anne knows.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 leave("Beth", "kitchen"), put("Anne", "apple", "basket", peeking=["Beth"]))
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "box"
    # A peeker's belief about a non-peeker's belief is updated as for any observer.
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "basket"


def test_distracted_witness_updates_nothing_at_any_order():
    # Beth is in the room but distracted while Anne moves the apple.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 put("Anne", "apple", "basket", distracted=["Beth"]))
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    # Beth's second-order belief does not change either (a flaw of the paper's tracker).
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "box"
    # Nobody noticed the distraction: Anne believes Beth saw it.
    q = ask(out, "In which container does Anne think that Beth will search for the apple?")
    assert q["answer"] == "basket" and not q["false_belief"]
    assert "Beth was distracted" in out["text"]


def test_modifiers_apply_to_one_action_only():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"),
                 put("Anne", "apple", "box", distracted=["Beth"]), put("Anne", "apple", "basket"))
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    out = labels(enter("Anne", "kitchen"), enter("Beth", "bedroom"),
                 put("Anne", "apple", "box", peeking=["Beth"]), put("Anne", "apple", "basket"))
    assert answer(out, "In which container will Beth search for the apple?") == "box"


# --------------------------------------------------------------------------- enter / leave
def test_enter_from_another_room_is_seen_by_the_people_left_behind():
    t = track(story(enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Anne", "garden")))
    assert t.person_room["Anne"] == "garden"
    assert t.belief(("Beth",), ("at", "Anne")) == Away("kitchen")  # not "still in the kitchen"
    assert t.belief(("Anne",), ("at", "Anne")) == "garden"


def test_enter_precondition_not_already_in_the_room():
    with pytest.raises(StoryError, match=r"action 2 \(enter_room\): Anne is already in the kitchen"):
        track(story(enter("Anne", "kitchen"), enter("Anne", "kitchen")))


def test_entrant_sees_objects_in_the_open_but_not_inside_containers():
    # Anne carries the apple to the garden; Beth walks in and sees it lying there.
    # The pear is inside the box in the kitchen: Carl, entering later, does not see it moved.
    out = labels(enter("Anne", "kitchen"), carry("Anne", "apple", "garden"),
                 enter("Beth", "garden"))
    assert answer(out, "In which room will Beth search for the apple?") == "garden"
    assert answer(out, "In which room does Beth think that Anne will search for the apple?") \
        == "garden"
    assert answer(out, "In which room does Anne think that Beth will search for the apple?") \
        == "garden"
    out = labels(enter("Carl", "kitchen"), put("Carl", "pear", "box"), leave("Carl", "kitchen"),
                 enter("Anne", "kitchen"), put("Anne", "pear", "basket"), leave("Anne", "kitchen"),
                 enter("Carl", "kitchen"))
    # Object permanence: what is in a container stays as Carl last saw it.
    assert answer(out, "In which container will Carl search for the pear?") == "box"


def test_entrant_learns_an_object_in_the_open_is_gone():
    # Beth saw the apple lying in the garden; while she was away Anne took it to the kitchen.
    # Back in the garden Beth sees it is not there, but cannot know where it went.
    out = labels(enter("Anne", "garden"), enter("Beth", "garden"),
                 carry("Anne", "apple", "kitchen"), carry("Anne", "apple", "garden"),
                 leave("Beth", "garden"), carry("Anne", "apple", "kitchen"),
                 enter("Beth", "garden"))
    assert ask(out, "In which room will Beth search for the apple?") is None
    assert answer(out, "In which room will Anne search for the apple?") == "kitchen"


def test_leaving_changes_no_belief_about_objects():
    out = labels(enter("Anne", "kitchen"), put("Anne", "apple", "box"), leave("Anne", "kitchen"))
    assert answer(out, "In which container will Anne search for the apple?") == "box"


def test_leave_precondition_in_that_room():
    with pytest.raises(StoryError, match=r"action 2 \(leave_room\): Anne is not in the garden"):
        track(story(enter("Anne", "kitchen"), leave("Anne", "garden")))


# --------------------------------------------------------------------------- moving objects
@pytest.mark.parametrize("actions, message", [
    ([put("Anne", "apple", "box")], r"action 1 \(move_object_container\): Anne is not in any room"),
    ([enter("Anne", "kitchen"), put("Anne", "apple", "box"), enter("Anne", "garden"),
      put("Anne", "apple", "basket")], r"action 4 .*the apple is in the kitchen, not in the garden"),
    ([enter("Anne", "kitchen"), put("Anne", "apple", "box"), carry("Anne", "apple", "garden"),
      put("Anne", "apple", "box")], r"action 4 .*the box is in the kitchen, not in the garden"),
    ([enter("Anne", "kitchen"), put("Anne", "apple", "box"), put("Anne", "apple", "box")],
     r"action 3 .*the apple is already in the box"),
])
def test_move_object_container_preconditions(actions, message):
    with pytest.raises(StoryError, match=message):
        track(story(*actions))


def test_move_object_container_observers_learn_container_and_room():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"))
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    assert answer(out, "In which room will Beth search for the apple?") == "kitchen"
    assert answer(out, "In which room does Beth think that Anne will search for the apple?") \
        == "kitchen"


def test_move_object_room_old_room_learns_both_left_not_where_to():
    # Anne takes the apple out of the box and carries it to the garden; Beth stays behind.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 carry("Anne", "apple", "garden"))
    assert "Anne moved the apple to the garden, leaving the box in its original location." \
        in out["text"]
    assert ask(out, "In which room will Beth search for the apple?") is None  # unknown
    assert ask(out, "In which container will Beth search for the apple?") is None  # in none
    assert answer(out, "In which room will Anne search for the apple?") == "garden"
    assert answer(out, "In which room is the apple now?") == "garden"
    assert ask(out, "In which container is the apple now?") is None
    assert answer(out, "In which container was the apple before Anne moved the apple to the "
                       "garden?") == "box"
    assert answer(out, "In which room was the apple before Anne moved the apple to the "
                       "garden?") == "kitchen"


def test_move_object_room_destination_witnesses_see_it_arrive():
    out = labels(enter("Beth", "garden"), enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                 carry("Anne", "apple", "garden"))
    assert answer(out, "In which room will Beth search for the apple?") == "garden"
    assert answer(out, "In which room does Anne think that Beth will search for the apple?") \
        == "garden"


# --------------------------------------------------------------------------- state updates
def test_state_update_observers_learn_and_precondition_new_value():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), leave("Beth", "kitchen"),
                 salt("Anne"))
    assert answer(out, "Does Anne believe that the apple is salted? Answer yes or no.") == "yes"
    assert answer(out, "Does Beth believe that the apple is salted? Answer yes or no.") == "no"
    with pytest.raises(StoryError, match=r"action 3 .*the apple already is salted"):
        track(story(enter("Anne", "kitchen"), salt("Anne"), salt("Anne")))


def test_visible_state_is_learned_by_a_later_entrant_invisible_is_not():
    # Anne peels (visible) and salts (invisible) the apple lying in the kitchen; Beth comes in.
    out = labels(enter("Anne", "kitchen"), peel("Anne"), salt("Anne"), enter("Beth", "kitchen"))
    assert answer(out, "Does Beth believe that the apple is peeled? Answer yes or no.") == "yes"
    assert answer(out, "Does Beth believe that the apple is salted? Answer yes or no.") == "no"
    assert answer(out, "Does Anne believe that Beth believes that the apple is peeled? Answer yes "
                       "or no.") == "yes"


def test_visible_state_inside_a_container_is_not_seen_by_an_entrant():
    out = labels(enter("Anne", "kitchen"), peel("Anne"), put("Anne", "apple", "box"),
                 enter("Beth", "kitchen"))
    assert answer(out, "Does Beth believe that the apple is peeled? Answer yes or no.") == "no"


def test_state_values_compared_exactly_not_by_substring():
    out = labels(enter("Anne", "kitchen"),
                 update("Anne", "apple", "is red", "Anne painted the apple red.", True, "<color>"),
                 update("Anne", "apple", "is reddish", "Anne repainted the apple reddish.", True,
                        "<color>"))
    assert answer(out, "Does Anne believe that the apple is red? Answer yes or no.") == "no"
    assert answer(out, "Does Anne believe that the apple is reddish? Answer yes or no.") == "yes"


# --------------------------------------------------------------------------- communication
def test_private_chitchat_listener_learns_speaker_believes_it_others_do_not():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
                 tell("Anne", "Beth", "election"))
    assert answer(out, "Does Beth know about the election?") == "yes"
    assert answer(out, "Does Carl know about the election?") == "no"  # private: not overheard
    assert answer(out, "What does Anne think about Beth's belief on the election? (knows about it "
                       "/ does not know about it)") == "knows about it"
    assert answer(out, "What does Carl think about Beth's belief on the election? (knows about it "
                       "/ does not know about it)") == "does not know about it"
    assert ask(out, "Does Carl know about the election?")["interesting"]


def test_private_chitchat_distracted_listener_and_peeker():
    out = labels(enter("Anne", "kitchen"), tell("Anne", "Beth", "election", distracted=["Beth"]))
    assert answer(out, "Does Beth know about the election?") == "no"
    q = ask(out, "What does Anne think about Beth's belief on the election? (knows about it / "
                 "does not know about it)")
    assert q["answer"] == "knows about it" and q["false_belief"]
    out = labels(tell("Anne", "Beth", "election", peeking=["Carl"]))
    assert answer(out, "Does Carl know about the election?") == "yes"
    assert answer(out, "What does Anne think about Carl's belief on the election? (knows about it "
                       "/ does not know about it)") == "does not know about it"
    assert answer(out, "What does Carl think about Beth's belief on the election? (knows about it "
                       "/ does not know about it)") == "knows about it"


def test_world_state_message_passes_an_out_of_date_belief():
    # Anne saw the apple put in the box and left; Carl moved it to the basket.
    # Anne then tells Beth (who saw nothing) that the apple is in the box: Beth believes it.
    out = labels(enter("Anne", "kitchen"), enter("Carl", "kitchen"), put("Carl", "apple", "box"),
                 leave("Anne", "kitchen"), put("Carl", "apple", "basket"),
                 tell("Anne", "Beth", ("apple", "container_location", "box")))
    assert "Anne told privately to Beth that the apple is in the box." in out["text"]
    q = ask(out, "In which container will Beth search for the apple?")
    assert q["answer"] == "box" and q["false_belief"]
    assert answer(out, "In which room will Beth search for the apple?") == "kitchen"
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "box"
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "box"


def test_world_state_message_does_not_override_newer_knowledge():
    # Carl himself moved the apple to the basket after Anne left; Anne's report is stale for him.
    out = labels(enter("Anne", "kitchen"), enter("Carl", "kitchen"), put("Carl", "apple", "box"),
                 leave("Anne", "kitchen"), put("Carl", "apple", "basket"),
                 tell("Anne", "Carl", ("apple", "container_location", "box")))
    assert answer(out, "In which container will Carl search for the apple?") == "basket"
    # Anne does not know Carl knows better.
    assert answer(out, "In which container does Anne think that Carl will search for the "
                       "apple?") == "box"


def test_world_state_message_must_be_the_speakers_belief():
    with pytest.raises(StoryError, match=r"action 3 .*Anne believes the apple is in the box, "
                                         r"not in the basket"):
        track(story(enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                    tell("Anne", "Beth", ("apple", "container_location", "basket"))))
    with pytest.raises(StoryError, match=r"Beth does not know which room the apple is in"):
        track(story(enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                    tell("Beth", "Anne", ("apple", "room_location", "kitchen"))))


def test_room_message_keeps_a_consistent_container_belief():
    # Beth is told the apple is in the kitchen; she had seen it put in the kitchen's box.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 tell("Anne", "Beth", ("apple", "room_location", "kitchen")))
    assert answer(out, "In which container will Beth search for the apple?") == "box"


def test_broadcast_everyone_in_the_room_hears_and_needs_a_listener():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "garden"),
                 announce("Anne", "election"))
    assert answer(out, "Does Beth know about the election?") == "yes"
    assert answer(out, "Does Carl know about the election?") == "no"
    assert answer(out, "What does Beth think about Anne's belief on the election? (knows about it "
                       "/ does not know about it)") == "knows about it"
    assert "Anne told out loud about the election." in out["text"]
    with pytest.raises(StoryError, match=r"action 2 \(broadcast_communication\): nobody else is "
                                         r"in the kitchen to hear Anne"):
        track(story(enter("Anne", "kitchen"), announce("Anne", "election")))


def test_modifier_preconditions():
    with pytest.raises(StoryError, match="Beth already witness"):
        track(story(enter("Anne", "kitchen"), enter("Beth", "kitchen"),
                    put("Anne", "apple", "box", peeking=["Beth"])))
    with pytest.raises(StoryError, match="Beth cannot be distracted: not a witness"):
        track(story(enter("Anne", "kitchen"), put("Anne", "apple", "box", distracted=["Beth"])))
    with pytest.raises(StoryError, match="Anne performs the action"):
        track(story(enter("Anne", "kitchen"), put("Anne", "apple", "box", peeking=["Anne"])))


# --------------------------------------------------------------------------- questions
def test_memory_questions_at_every_change_point_and_ambiguous_ones_skipped():
    out = labels(enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                 put("Anne", "apple", "basket"), carry("Anne", "apple", "garden"))
    mem = {q["question"]: (q["answer"], q["before_action"]) for q in out["questions"]
           if q["kind"] == "memory_before"}
    assert mem == {
        "In which container was the apple before Anne moved the apple to the basket?": ("box", 2),
        "In which container was the apple before Anne moved the apple to the garden?":
            ("basket", 3),
        "In which room was the apple before Anne moved the apple to the garden?": ("kitchen", 3),
    }
    # The same move twice: "before Anne moved the apple to the box" would not say which time.
    out = labels(enter("Anne", "kitchen"), put("Anne", "apple", "box"),
                 put("Anne", "apple", "basket"), put("Anne", "apple", "box"))
    assert [q["question"] for q in out["questions"] if q["kind"] == "memory_before"] == [
        "In which container was the apple before Anne moved the apple to the basket?"]


def test_interesting_is_per_group_of_questions_differing_only_in_people():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"))
    assert not any(q["interesting"] for q in out["questions"])  # everyone agrees
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 leave("Beth", "kitchen"), put("Anne", "apple", "basket"))
    flags = {q["question"]: q["interesting"] for q in out["questions"]}
    assert flags["In which container will Beth search for the apple?"]
    assert flags["In which container will Anne search for the apple?"]
    assert not flags["In which room will Anne search for the apple?"]  # all answer kitchen
    assert not flags["In which container is the apple now?"]


def test_question_fields_follow_the_contract():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 salt("Anne"), tell("Anne", "Beth", "election"))
    required = {"order", "kind", "property", "people", "thing", "state_value", "before_action",
                "question", "answer", "answer_type", "false_belief", "interesting"}
    for q in out["questions"]:
        assert required <= set(q)
        assert q["kind"] in {"belief", "ground_truth", "memory_beginning", "memory_before"}
        assert q["property"] in {"room_location", "container_location", "knowledge", "state"}
        assert (q["order"] == 0) == (q["people"] == [])
    state = ask(out, "Does Anne believe that Beth believes that the apple is salted? Answer yes "
                     "or no.")
    assert state["state_value"] == "is salted" and state["thing"] == "apple"
    assert state["answer_type"] == "yes_no" and state["answer"] == "yes"


# --------------------------------------------------------------------------- higher orders
def test_third_and_fourth_order_beliefs_with_a_secret_witness():
    # Anne and Beth see the apple put in the basket. Beth leaves; Anne moves the apple to the
    # box while Beth peeks in secret. Anne does not know Beth saw it.
    actions = (enter("Anne", "kitchen"), enter("Beth", "kitchen"),
               put("Anne", "apple", "basket"), leave("Beth", "kitchen"),
               put("Anne", "apple", "box", peeking=["Beth"]))
    out = labels(*actions, max_order=4)
    q = "In which container does {} think that {} will search for the apple?"
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    assert answer(out, q.format("Anne", "Beth")) == "basket"
    assert answer(out, q.format("Beth", "Anne")) == "box"
    # Beth knows Anne thinks Beth still believes "basket".
    third = ask(out, "In which container does Beth think that Anne thinks that Beth will search "
                     "for the apple?")
    assert third["answer"] == "basket" and third["order"] == 3
    assert third["people"] == ["Beth", "Anne", "Beth"]
    fourth = ask(out, "In which container does Beth think that Anne thinks that Beth thinks that "
                      "Anne will search for the apple?")
    assert fourth["answer"] == "basket" and fourth["order"] == 4
    assert answer(out, "In which container does Anne think that Beth thinks that Anne will search "
                       "for the apple?") == "basket"
    assert max(q["order"] for q in out["questions"]) == 4
    assert max(q["order"] for q in labels(*actions)["questions"]) == 2


def test_third_order_state_and_knowledge_templates_nest():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
                 leave("Carl", "kitchen"), salt("Anne"), tell("Anne", "Beth", "election"),
                 max_order=3)
    assert answer(out, "Does Anne believe that Beth believes that Carl believes that the apple is "
                       "salted? Answer yes or no.") == "no"
    assert answer(out, "Does Beth believe that Anne believes that Beth believes that the apple is "
                       "salted? Answer yes or no.") == "yes"
    assert answer(out, "What does Anne think that Beth thinks about Anne's belief on the "
                       "election? (knows about it / does not know about it)") == "knows about it"
    assert answer(out, "What does Carl think that Anne thinks about Beth's belief on the "
                       "election? (knows about it / does not know about it)") \
        == "does not know about it"


# --------------------------------------------------------------------------- messages (2026-11-25)
def test_message_about_a_persons_room_is_accepted_and_rendered_without_article():
    # The example: George entered at action 4; at action 5 he tells Anne where he is.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), leave("Beth", "kitchen"),
                 enter("George", "bedroom"),
                 tell("George", "Anne", ("George", "room_location", "bedroom")))
    assert out["text"].splitlines()[4] == "George told privately to Anne that George is in the bedroom."
    t = track(story(enter("Anne", "kitchen"), enter("George", "bedroom"),
                    tell("George", "Anne", ("George", "room_location", "bedroom"))))
    assert t.belief(("Anne",), ("at", "George")) == "bedroom"
    assert t.belief(("George", "Anne"), ("at", "George")) == "bedroom"


def test_message_about_someone_elses_room_passes_the_speakers_belief():
    # Beth saw Carl in the garden; she tells Anne, who was never there.
    t = track(story(enter("Carl", "garden"), enter("Beth", "garden"), leave("Beth", "garden"),
                    enter("Anne", "kitchen"), tell("Beth", "Anne", ("Carl", "room_location", "garden"))))
    assert t.belief(("Anne",), ("at", "Carl")) == "garden"
    with pytest.raises(StoryError, match=r"^action 4 \(private_communication\): Beth believes Carl "
                                         r"is in the garden, not in the kitchen$"):
        track(story(enter("Carl", "garden"), enter("Beth", "garden"), leave("Beth", "garden"),
                    tell("Beth", "Anne", ("Carl", "room_location", "kitchen"))))
    with pytest.raises(StoryError, match=r"^action 4 .*: Anne does not know which room Carl is in "
                                         r"\(only that Carl left the garden\)$"):
        track(story(enter("Carl", "garden"), enter("Anne", "garden"), leave("Carl", "garden"),
                    tell("Anne", "Beth", ("Carl", "room_location", "garden"))))


def test_message_about_a_containers_room_is_accepted():
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "crate"),
                 announce("Anne", ("crate", "room_location", "kitchen")))
    assert "Anne told out loud that the crate is in the kitchen." in out["text"]
    with pytest.raises(StoryError, match=r"^action 4 .*: the crate is in the kitchen, not in the "
                                         r"garden$"):
        track(story(enter("Anne", "kitchen"), enter("Beth", "kitchen"),
                    put("Anne", "apple", "crate"), announce("Anne", ("crate", "room_location", "garden"))))


@pytest.mark.parametrize("topic, message", [
    (("apple", "container_location", "garden"), r"action 3 .*Anne believes the apple is in the box, "
                                                r"not in the garden"),
    (("apple", "room_location", "box"), r"action 3 .*'box' is a container, not a room"),
    (("Anne", "container_location", "box"), r"action 3 .*Anne is a person: a message can say "
                                            r"which room Anne is in, not which container"),
    (("pear", "room_location", "kitchen"), r"action 3 .*'pear' is no person, object or container "
                                          r"that has appeared in the story before this action"),
])
def test_rejected_messages_name_what_is_really_wrong(topic, message):
    with pytest.raises(StoryError, match=message):
        track(story(enter("Anne", "kitchen"), put("Anne", "apple", "box"), tell("Anne", "Beth", topic)))


def test_error_messages_number_actions_from_one_like_the_sentences():
    # The third sentence fails: the message says "action 3", whatever kind of error it is.
    from exploretom.semantics.story import StoryFormatError
    with pytest.raises(StoryError, match=r"^action 3 \(leave_room\)"):
        track(story(enter("Anne", "kitchen"), enter("Beth", "garden"), leave("Anne", "garden")))
    with pytest.raises(StoryFormatError, match=r"^action 3: unknown action type 'dance'"):
        story(enter("Anne", "kitchen"), enter("Beth", "garden"), {"type": "dance"})


def test_at_the_beginning_an_object_first_carried_away_was_where_it_was_picked_up():
    # The example: Anne entered the server room. Anne moved the phone to the office.
    out = labels(enter("Anne", "server room"), carry("Anne", "phone", "office"))
    assert answer(out, "In which room was the phone at the beginning?") == "server room"
    assert answer(out, "In which room is the phone now?") == "office"
    assert answer(out, "In which room was the phone before Anne moved the phone to the "
                       "office?") == "server room"
    assert ask(out, "In which container was the phone at the beginning?") is None  # in the open
    # Beth stayed in the server room: she saw Anne leave with the phone, not where to.
    out = labels(enter("Anne", "server room"), enter("Beth", "server room"),
                 carry("Anne", "phone", "office"))
    assert ask(out, "In which room will Beth search for the phone?") is None
    assert answer(out, "In which room will Anne search for the phone?") == "office"


# --------------------------------------------------------------------------- which information wins
def test_a_receiver_who_can_tell_a_message_is_stale_keeps_its_newer_belief():
    # SEMANTICS.md: Mateo moved the calculator to the box while Chloe was away; when Chloe says
    # "backpack", Mateo knows she missed the move and keeps "box".
    out = labels(enter("Mateo", "office"), enter("Chloe", "office"),
                 put("Mateo", "calculator", "backpack"), leave("Chloe", "office"),
                 put("Mateo", "calculator", "box"),
                 tell("Chloe", "Mateo", ("calculator", "container_location", "backpack")))
    assert answer(out, "In which container will Mateo search for the calculator?") == "box"
    # Chloe cannot know that Mateo knows better.
    assert answer(out, "In which container does Chloe think that Mateo will search for the "
                       "calculator?") == "backpack"


def test_among_messages_the_receiver_cannot_judge_the_latest_wins():
    # The example: Carl, never with any of them, is told "box" by Anne, then "basket" by
    # Beth, then "box" by Dave. Dave's news is older than Beth's, but Carl cannot know that.
    out = labels(enter("Dave", "kitchen"), enter("Anne", "kitchen"), put("Dave", "apple", "box"),
                 leave("Dave", "kitchen"), leave("Anne", "kitchen"),
                 enter("Beth", "kitchen"), put("Beth", "apple", "basket"), leave("Beth", "kitchen"),
                 enter("Carl", "garden"),
                 tell("Anne", "Carl", ("apple", "container_location", "box")),
                 tell("Beth", "Carl", ("apple", "container_location", "basket")),
                 tell("Dave", "Carl", ("apple", "container_location", "box")))
    q = ask(out, "In which container will Carl search for the apple?")
    assert q["answer"] == "box" and q["false_belief"]
    # Told "box" by Anne again, Carl can tell it is stale: he knows Anne's belief and heard
    # something newer from Beth since. (Without Dave's message: he keeps "basket".)
    out = labels(enter("Dave", "kitchen"), enter("Anne", "kitchen"), put("Dave", "apple", "box"),
                 leave("Dave", "kitchen"), leave("Anne", "kitchen"),
                 enter("Beth", "kitchen"), put("Beth", "apple", "basket"), leave("Beth", "kitchen"),
                 enter("Carl", "garden"),
                 tell("Anne", "Carl", ("apple", "container_location", "box")),
                 tell("Beth", "Carl", ("apple", "container_location", "basket")),
                 tell("Anne", "Carl", ("apple", "container_location", "box")))
    assert answer(out, "In which container will Carl search for the apple?") == "basket"


def test_a_message_the_receiver_cannot_date_wins_even_over_what_it_saw():
    # Beth saw Anne put the apple in the box and left. Carl came in and saw Anne move it to the
    # basket. Carl, whom Beth never met, tells her "basket": she cannot tell his news is stale
    # (it is not), so she believes it, as a reader would.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Anne", "apple", "box"),
                 leave("Beth", "kitchen"), enter("Carl", "kitchen"),
                 put("Anne", "apple", "basket"),
                 tell("Carl", "Beth", ("apple", "container_location", "basket")))
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    assert answer(out, "In which container does Carl think that Beth will search for the "
                       "apple?") == "basket"
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "box"


def test_news_from_someone_whose_distraction_nobody_saw():
    # Carl watched Anne move the apple from the box to the basket and did not notice that Beth
    # was distracted. When Beth says "box", Carl's model of her says "basket", not "box": he
    # cannot tell her news is stale. But Carl and Anne have been in the kitchen since the move
    # and would have seen any change: they know "basket" is current and keep it (2026-11-27; by
    # the rule of 2026-11-25 alone both adopted "box").
    actions = [enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
               put("Anne", "apple", "box"), put("Anne", "apple", "basket", distracted=["Beth"])]
    box = announce("Beth", ("apple", "container_location", "box"))
    out = labels(*actions, box)
    for person in ("Carl", "Anne"):
        q = ask(out, f"In which container will {person} search for the apple?")
        assert q["answer"] == "basket" and not q["false_belief"]
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    assert answer(out, "In which container is the apple now?") == "basket"
    # Beth said "box": everyone now knows that is what she believes.
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "box"
    # Carl saw Anne stay: he thinks she keeps "basket".
    assert answer(out, "In which container does Carl think that Anne will search for the "
                       "apple?") == "basket"
    # Had Carl stepped out and back in after the move, he could not know the basket is still
    # current: Beth's news (which he cannot tell is stale) wins for him, not for Anne.
    out = labels(*actions, leave("Carl", "kitchen"), enter("Carl", "kitchen"), box)
    assert answer(out, "In which container will Carl search for the apple?") == "box"
    assert answer(out, "In which container will Anne search for the apple?") == "basket"
    assert answer(out, "In which container does Anne think that Carl will search for the "
                       "apple?") == "box"


# --------------------------------------------------------------------------- watching a state update
def test_watching_a_state_update_tells_the_room_not_the_container():
    # The example: Beth moved the apple to the basket while Anne was away; back in the
    # kitchen, Anne watches Beth peel it. She learns the apple is here, not in which container.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), put("Beth", "apple", "box"),
                 leave("Anne", "kitchen"), put("Beth", "apple", "basket"),
                 enter("Anne", "kitchen"), peel("Beth"))
    assert ask(out, "In which container will Anne search for the apple?") is None
    q = ask(out, "In which room will Anne search for the apple?")
    assert q["answer"] == "kitchen" and not q["false_belief"]
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    assert ask(out, "In which container does Beth think that Anne will search for the apple?") \
        is None
    assert ask(out, "In which container does Anne think that Beth will search for the apple?") \
        is None  # Anne does not know which one Beth knows
    assert answer(out, "Does Anne believe that the apple is peeled? Answer yes or no.") == "yes"


def test_watching_a_state_update_of_an_object_in_the_open_tells_where_it_lies():
    # "Gus dropped the teddy bear in the mud" in the hallway: Lily, who had seen Gus carry the
    # bear out of the nursery (not where to), watches in secret and now knows where it is.
    mud = update("Gus", "teddy bear", "is muddy", "Gus dropped the teddy bear in the mud.", True,
                 "<is_muddy>", peeking=["Lily"])
    out = labels(enter("Gus", "nursery"), enter("Lily", "nursery"),
                 carry("Gus", "teddy bear", "hallway"), mud)
    assert answer(out, "In which room will Lily search for the teddy bear?") == "hallway"
    assert answer(out, "In which room does Lily think that Gus will search for the teddy "
                       "bear?") == "hallway"
    # Gus does not know Lily peeked: for him she still has no idea where the bear went.
    assert ask(out, "In which room does Gus think that Lily will search for the teddy bear?") \
        is None
    assert ask(out, "In which container will Lily search for the teddy bear?") is None  # none
    # A witness in the hallway sees it all, and Gus knows she did.
    out = labels(enter("Gus", "nursery"), enter("Lily", "nursery"),
                 carry("Gus", "teddy bear", "hallway"), enter("Lily", "hallway"),
                 leave("Lily", "hallway"), enter("Lily", "hallway"),
                 update("Gus", "teddy bear", "is muddy", "Gus dropped the teddy bear in the mud.",
                        True, "<is_muddy>"))
    assert answer(out, "In which room does Gus think that Lily will search for the teddy "
                       "bear?") == "hallway"


# --------------------------------------------------------------------------- false_belief, interesting
def test_ignorance_is_not_a_false_belief():
    # Anne peeled the apple after Beth left; Beth has no idea: "no", but not a false belief.
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), leave("Beth", "kitchen"),
                 peel("Anne"))
    q = ask(out, "Does Beth believe that the apple is peeled? Answer yes or no.")
    assert q["answer"] == "no" and not q["false_belief"]
    q = ask(out, "Does Anne believe that Beth believes that the apple is peeled? Answer yes or no.")
    assert q["answer"] == "no" and not q["false_belief"]
    # Beth saw the apple painted red and left; Anne painted it green. Beth holds "red", a value
    # that is not the truth: a false belief.
    paint = update("Anne", "apple", "is red", "Anne painted the apple red.", True, "<color>")
    repaint = update("Anne", "apple", "is green", "Anne painted the apple green.", True, "<color>")
    out = labels(enter("Anne", "kitchen"), enter("Beth", "kitchen"), paint,
                 leave("Beth", "kitchen"), repaint)
    for value in ("red", "green"):  # Beth believes "red": both questions test a false belief
        q = ask(out, f"Does Beth believe that the apple is {value}? Answer yes or no.")
        assert q["answer"] == ("yes" if value == "red" else "no") and q["false_belief"]
    q = ask(out, "Does Anne believe that the apple is red? Answer yes or no.")
    assert q["answer"] == "no" and not q["false_belief"]


def test_not_knowing_about_a_topic_is_never_a_false_belief():
    out = labels(enter("Anne", "kitchen"), enter("Charles", "kitchen"), enter("Beth", "garden"),
                 announce("Anne", "election"))
    q = ask(out, "What does Beth think about Anne's belief on the election? (knows about it / "
                 "does not know about it)")
    assert q["answer"] == "does not know about it" and not q["false_belief"]


def test_order_two_interesting_varies_the_outermost_person_only():
    # Anne tells the election news out loud to Charles; Beth is in the garden.
    out = labels(enter("Anne", "kitchen"), enter("Charles", "kitchen"), enter("Beth", "garden"),
                 announce("Anne", "election"))
    know = "What does {} think about {}'s belief on the election? (knows about it / does not " \
           "know about it)"
    # "Does Charles think Anne knows" differs from "does Beth think Anne knows": interesting.
    assert answer(out, know.format("Charles", "Anne")) == "knows about it"
    assert ask(out, know.format("Charles", "Anne"))["interesting"]
    assert ask(out, know.format("Beth", "Anne"))["interesting"]
    # Nobody thinks Beth knows: whoever is asked, the same answer; the answers about Anne and
    # Charles (another inner person) do not count.
    assert answer(out, know.format("Anne", "Beth")) == "does not know about it"
    assert not ask(out, know.format("Anne", "Beth"))["interesting"]
    assert not ask(out, know.format("Charles", "Beth"))["interesting"]


def test_a_mind_at_the_highest_asked_order_still_judges_messages():
    # Anne moved the apple to the basket in front of Beth after Carl left; back in the kitchen,
    # Carl says "box". Anne knows Beth saw the move and knows Carl missed it: she thinks Beth
    # keeps "basket". (Order 2 is the highest asked; a third order is tracked to judge this.)
    actions = (enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
               put("Anne", "apple", "box"), leave("Carl", "kitchen"),
               put("Anne", "apple", "basket"), enter("Carl", "kitchen"),
               announce("Carl", ("apple", "container_location", "box")))
    q = "In which container does Anne think that Beth will search for the apple?"
    assert answer(labels(*actions), q) == "basket"
    assert answer(labels(*actions, max_order=3), q) == "basket"
    assert answer(labels(*actions), "In which container will Beth search for the apple?") \
        == "basket"


# --------------------------------------------------------------------------- known to be current
BOX, BASKET = ("apple", "container_location", "box"), ("apple", "container_location", "basket")
# Anne entered the kitchen. Carl entered the kitchen. Carl moved the apple to the box.
# Carl left the kitchen. Anne moved the apple to the basket.
CARL_SAW_THE_BOX = (enter("Anne", "kitchen"), enter("Carl", "kitchen"), put("Carl", "apple", "box"),
                    leave("Carl", "kitchen"), put("Anne", "apple", "basket"))


def test_a_person_who_knows_her_value_is_current_keeps_it_whoever_relays_older_news():
    # The story: ... Carl told privately to Dave that the apple is in the box. Dave told
    # privately to Anne that the apple is in the box. Anne moved it herself and never left.
    out = labels(*CARL_SAW_THE_BOX, tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, "In which container will Anne search for the apple?")
    assert q["answer"] == "basket" and not q["false_belief"]
    assert answer(out, "In which room will Anne search for the apple?") == "kitchen"
    # Dave and Carl believe "box"; Dave told Anne so and does not know she knows better.
    assert answer(out, "In which container will Dave search for the apple?") == "box"
    assert answer(out, "In which container does Dave think that Anne will search for the "
                       "apple?") == "box"
    assert answer(out, "In which container does Anne think that Dave will search for the "
                       "apple?") == "box"
    # Told by Carl directly she keeps "basket" too (she also knows Carl left before her move).
    out = labels(*CARL_SAW_THE_BOX, tell("Carl", "Anne", BOX))
    assert answer(out, "In which container will Anne search for the apple?") == "basket"


def test_the_news_wins_again_once_the_receiver_has_left_the_room():
    # Anne stepped out of the kitchen after her move and came back: the apple is inside the
    # basket, out of sight, and she cannot know that nobody moved it while she was away.
    out = labels(*CARL_SAW_THE_BOX, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, "In which container will Anne search for the apple?")
    assert q["answer"] == "box" and q["false_belief"]
    # An object lying in the open is seen again on coming back: then she knows again.
    # Carl entered the garden. Anne entered the garden. Carl moved the apple to the crate. Carl
    # left the garden. Anne moved the apple to the kitchen. Anne left the kitchen. Anne entered
    # the kitchen. Carl told privately to Dave that the apple is in the crate. Dave told
    # privately to Anne that the apple is in the crate.
    crate = ("apple", "container_location", "crate")
    out = labels(enter("Carl", "garden"), enter("Anne", "garden"), put("Carl", "apple", "crate"),
                 leave("Carl", "garden"), carry("Anne", "apple", "kitchen"),
                 leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                 tell("Carl", "Dave", crate), tell("Dave", "Anne", crate))
    q = ask(out, "In which room will Anne search for the apple?")
    assert q["answer"] == "kitchen" and not q["false_belief"]
    assert ask(out, "In which container will Anne search for the apple?") is None  # in none
    assert answer(out, "In which room will Dave search for the apple?") == "garden"


def test_the_news_wins_when_the_receiver_was_distracted():
    # Beth moved the apple back to the box while Anne was distracted; Anne did not see it, so
    # she cannot know her "basket" is current, and the news (true, this time) wins.
    out = labels(*CARL_SAW_THE_BOX, enter("Beth", "kitchen"),
                 put("Beth", "apple", "box", distracted=["Anne"]), leave("Beth", "kitchen"),
                 tell("Beth", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, "In which container will Anne search for the apple?")
    assert q["answer"] == "box" and not q["false_belief"]
    # Any distraction is a break (docs/exploretom-semantics.md): distracted while Beth came in,
    # Anne cannot know what she missed, so she cannot know "basket" is still current.
    out = labels(*CARL_SAW_THE_BOX, enter("Beth", "kitchen", distracted=["Anne"]),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, "In which container will Anne search for the apple?")
    assert q["answer"] == "box" and q["false_belief"]
    # Beth did not notice Anne's distraction: she thinks Anne knows better.
    out = labels(enter("Beth", "kitchen"), *CARL_SAW_THE_BOX,
                 enter("Erin", "kitchen", distracted=["Anne"]), tell("Carl", "Dave", BOX),
                 tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, "In which container will Anne search for the apple?") == "box"
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "basket"


def test_watching_the_room_but_not_the_container():
    # Anne watched Beth peel the apple in the kitchen, not knowing which container Beth had put
    # it in, and stayed. She knows it is in the kitchen: news that it is in the garden (or in
    # the garden's crate) is out of date for her. News of a container in the kitchen she cannot
    # judge, and adopts.
    # Dave entered the garden. Dave moved the apple to the crate. Dave left the garden. Beth
    # entered the garden. Beth moved the apple to the kitchen. Beth moved the apple to the box.
    # Anne entered the kitchen. Beth peeled the apple. ...
    actions = (enter("Dave", "garden"), put("Dave", "apple", "crate"), leave("Dave", "garden"),
               enter("Beth", "garden"), carry("Beth", "apple", "kitchen"),
               put("Beth", "apple", "box"), enter("Anne", "kitchen"), peel("Beth"))
    out = labels(*actions, tell("Dave", "Anne", ("apple", "room_location", "garden")),
                 tell("Dave", "Anne", ("apple", "container_location", "crate")))
    q = ask(out, "In which room will Anne search for the apple?")
    assert q["answer"] == "kitchen" and not q["false_belief"]
    assert ask(out, "In which container will Anne search for the apple?") is None
    out = labels(*actions, tell("Beth", "Anne", BOX))
    assert answer(out, "In which container will Anne search for the apple?") == "box"


def test_a_model_of_a_person_who_stayed_keeps_her_value():
    # Beth stayed in the kitchen and saw Anne move the apple and stay. Over the phone Dave passes
    # on Carl's "box" to Anne; Beth overhears it. Beth knows Anne knows better.
    actions = (enter("Beth", "kitchen"), *CARL_SAW_THE_BOX, tell("Carl", "Dave", BOX))
    out = labels(*actions, tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    q = ask(out, "In which container does Beth think that Anne will search for the apple?")
    assert q["answer"] == "basket" and not q["false_belief"]
    assert answer(out, "In which container does Anne think that Beth will search for the "
                       "apple?") == "basket"
    # Anne stepped out and back in front of Beth: for both, the news wins.
    out = labels(*actions, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                 tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, "In which container will Anne search for the apple?") == "box"
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "box"
    assert answer(out, "In which container will Beth search for the apple?") == "basket"
    # Beth stepped out and back: she did not see Anne stay, nor whether the apple moved while
    # she was out. The news wins for Beth and for her model of Anne; Anne keeps "basket".
    out = labels(*actions, leave("Beth", "kitchen"), enter("Beth", "kitchen"),
                 tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, "In which container will Anne search for the apple?") == "basket"
    assert answer(out, "In which container will Beth search for the apple?") == "box"
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "box"
    # Beth did not hear the message: her model of Anne has nothing to change.
    out = labels(*actions, leave("Beth", "kitchen"), tell("Dave", "Anne", BOX))
    assert answer(out, "In which container does Beth think that Anne will search for the "
                       "apple?") == "basket"


def test_what_everyone_in_the_room_knows_to_be_current_holds_at_every_order():
    # Dave entered the kitchen. Dave moved the apple to the box. Dave left the kitchen. Anne,
    # Beth and Carl entered the kitchen. Anne moved the apple to the basket. Dave told privately
    # to Erin that the apple is in the box. Erin entered the kitchen. Erin told out loud that
    # the apple is in the box.
    actions = (enter("Dave", "kitchen"), put("Dave", "apple", "box"), leave("Dave", "kitchen"),
               enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
               put("Anne", "apple", "basket"), tell("Dave", "Erin", BOX),
               enter("Erin", "kitchen"), announce("Erin", BOX))
    for max_order in (2, 3, 4):
        out = labels(*actions, max_order=max_order)
        assert answer(out, "In which container will Beth search for the apple?") == "basket"
        assert answer(out, "In which container does Beth think that Anne will search for the "
                           "apple?") == "basket"
        assert answer(out, "In which container will Erin search for the apple?") == "box"
        assert answer(out, "In which container does Anne think that Erin will search for the "
                           "apple?") == "box"
        # Erin does not know Anne moved it: she thinks Anne now believes her.
        assert answer(out, "In which container does Erin think that Anne will search for the "
                           "apple?") == "box"
    out = labels(*actions, max_order=4)
    assert answer(out, "In which container does Carl think that Beth thinks that Anne will "
                       "search for the apple?") == "basket"
    assert answer(out, "In which container does Carl think that Beth thinks that Anne thinks "
                       "that Carl will search for the apple?") == "basket"
    assert answer(out, "In which container does Anne think that Beth thinks that Erin will "
                       "search for the apple?") == "box"


def test_a_person_always_knows_which_room_she_is_in():
    # The story: Anne entered the kitchen. George entered the kitchen. George left the
    # kitchen. George told privately to Dave that Anne is in the kitchen. Anne left the kitchen.
    # Anne entered the bedroom. Dave told privately to Anne that Anne is in the kitchen. Anne
    # told privately to Beth that Anne is in the bedroom. (It used to be rejected: "Anne
    # believes Anne is in the kitchen".)
    in_kitchen = ("Anne", "room_location", "kitchen")
    in_bedroom = ("Anne", "room_location", "bedroom")
    actions = [enter("Anne", "kitchen"), enter("George", "kitchen"), leave("George", "kitchen"),
               tell("George", "Dave", in_kitchen), leave("Anne", "kitchen"),
               enter("Anne", "bedroom"), tell("Dave", "Anne", in_kitchen)]
    out = labels(*actions, tell("Anne", "Beth", in_bedroom))
    assert out["text"].splitlines()[-1] == ("Anne told privately to Beth that Anne is in the "
                                            "bedroom.")
    t = track(story(*actions, tell("Anne", "Beth", in_bedroom)))
    assert t.belief(("Anne",), ("at", "Anne")) == "bedroom"
    assert t.belief(("Beth",), ("at", "Anne")) == "bedroom"
    assert t.belief(("Dave",), ("at", "Anne")) == "kitchen"
    # Dave thinks Anne is in the kitchen, and that she knows where she is.
    assert t.belief(("Dave", "Anne"), ("at", "Anne")) == "kitchen"
    # Told the same by several people, she still knows.
    t = track(story(*actions, tell("George", "Anne", in_kitchen),
                    tell("Dave", "Anne", in_kitchen, peeking=["George"]),
                    tell("Anne", "George", in_bedroom)))
    assert t.belief(("Anne",), ("at", "Anne")) == "bedroom"
    assert t.belief(("George",), ("at", "Anne")) == "bedroom"
    with pytest.raises(StoryError, match=r"action 8 .*: Anne believes Anne is in the bedroom, "
                                         r"not in the kitchen$"):
        track(story(*actions, tell("Anne", "Beth", in_kitchen)))


def test_a_persons_word_on_her_own_room_is_current_when_she_says_it():
    # Beth saw Anne in the bedroom and left; George, who saw Anne in the kitchen later, told
    # Beth so. Anne, back in the bedroom, tells Beth where she is. Beth's model of Anne still
    # holds the older "bedroom" and her own "kitchen" is newer, but a person always knows
    # where she is: Beth believes Anne.
    t = track(story(enter("Anne", "bedroom"), enter("Beth", "bedroom"), leave("Beth", "bedroom"),
                    leave("Anne", "bedroom"), enter("Anne", "kitchen"), enter("George", "kitchen"),
                    leave("George", "kitchen"),
                    tell("George", "Beth", ("Anne", "room_location", "kitchen")),
                    leave("Anne", "kitchen"), enter("Anne", "bedroom"),
                    tell("Anne", "Beth", ("Anne", "room_location", "bedroom"))))
    assert t.belief(("Beth",), ("at", "Anne")) == "bedroom"


def test_people_in_the_same_room_know_who_is_there():
    # Dave saw Anne in the garden and left; Anne went to the kitchen, where Beth is. Dave tells
    # Beth that Anne is in the garden: Beth, with Anne in the kitchen, knows better, and may say
    # where Anne is.
    actions = [enter("Anne", "garden"), enter("Dave", "garden"), leave("Dave", "garden"),
               enter("Anne", "kitchen"), enter("Beth", "kitchen"),
               tell("Dave", "Beth", ("Anne", "room_location", "garden"))]
    t = track(story(*actions, tell("Beth", "Carl", ("Anne", "room_location", "kitchen"))))
    assert t.belief(("Beth",), ("at", "Anne")) == "kitchen"
    assert t.belief(("Carl",), ("at", "Anne")) == "kitchen"
    # Beth in the hall instead: she cannot tell, and believes Dave.
    actions[4] = enter("Beth", "hall")
    assert track(story(*actions)).belief(("Beth",), ("at", "Anne")) == "garden"


# ----------------------------------------------------------------------- knowing where it is not
# SEMANTICS.md 2026-11-28. Anne entered the kitchen. Carl entered the kitchen. Carl moved the
# apple to the box. Carl left the kitchen. Anne moved the apple to the basket. Beth entered the
# kitchen. Beth moved the apple to the garden, leaving the basket in its original location.
CARRIED_OUT = (*CARL_SAW_THE_BOX, enter("Beth", "kitchen"), carry("Beth", "apple", "garden"))
ANNE_ROOM = "In which room will Anne search for the apple?"
ANNE_CONTAINER = "In which container will Anne search for the apple?"


def test_who_saw_the_object_carried_out_and_stayed_ignores_a_relayed_claim_it_is_there():
    # The story: ... Carl told privately to Dave that the apple is in the box. Dave told
    # privately to Anne that the apple is in the box. Anne watched the apple leave the kitchen
    # and has not left it since: the box, in the kitchen, is out of date for her. She does not
    # know where the apple went: neither of her questions is asked (it used to be "box" and
    # "kitchen", both false beliefs).
    out = labels(*CARRIED_OUT, tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    assert ask(out, ANNE_CONTAINER) is None and ask(out, ANNE_ROOM) is None
    assert answer(out, "In which container will Dave search for the apple?") == "box"
    # Dave does not know she knows better.
    assert answer(out, "In which container does Dave think that Anne will search for the "
                       "apple?") == "box"
    assert track(story(*CARRIED_OUT, tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
                 ).location(("Anne",), "apple") == (None, "")  # being carried elsewhere
    # "The apple is in the kitchen" is as stale to her; "in the garden" she cannot judge, and
    # believes it: then the box is still out of date.
    out = labels(*CARRIED_OUT, tell("Carl", "Dave", ("apple", "room_location", "kitchen")),
                 tell("Dave", "Anne", ("apple", "room_location", "kitchen")))
    assert ask(out, ANNE_ROOM) is None
    out = labels(*CARRIED_OUT, tell("Beth", "Dave", ("apple", "room_location", "garden")),
                 tell("Dave", "Anne", ("apple", "room_location", "garden")),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, ANNE_ROOM)
    assert q["answer"] == "garden" and not q["false_belief"]
    assert ask(out, ANNE_CONTAINER) is None


def test_the_direct_speaker_twin_is_judged_the_same():
    # ... Carl told privately to Anne that the apple is in the box: she also knows Carl left
    # before her move (the older test of stale news), and she knows the apple left the kitchen.
    relayed = labels(*CARRIED_OUT, tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    direct = labels(*CARRIED_OUT, tell("Carl", "Dave", BOX), tell("Carl", "Anne", BOX))
    for q in (ANNE_ROOM, ANNE_CONTAINER):
        assert ask(direct, q) is None and ask(relayed, q) is None
    # Told by someone who never met her nor the apple (Dave, told by Erin, told by Carl: the
    # longest relay) she ignores it all the same.
    out = labels(*CARRIED_OUT, tell("Carl", "Erin", BOX), tell("Erin", "Dave", BOX),
                 tell("Dave", "Anne", BOX))
    assert ask(out, ANNE_CONTAINER) is None and ask(out, ANNE_ROOM) is None


def test_the_object_carried_out_and_brought_back_while_she_stayed_is_known_again():
    # ... Beth moved the apple to the kitchen (back from the garden, Anne watching it arrive).
    # Beth moved the apple to the basket. Carl told privately to Dave that the apple is in the
    # box. Dave told privately to Anne that the apple is in the box.
    out = labels(*CARRIED_OUT, carry("Beth", "apple", "kitchen"), put("Beth", "apple", "basket"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, ANNE_CONTAINER)
    assert q["answer"] == "basket" and not q["false_belief"]
    assert answer(out, ANNE_ROOM) == "kitchen"
    # Back in the open: she sees it is in no container.
    out = labels(*CARRIED_OUT, carry("Beth", "apple", "kitchen"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    assert answer(out, ANNE_ROOM) == "kitchen" and ask(out, ANNE_CONTAINER) is None
    # Brought back while she was out of the kitchen and put in the box: she came back, could not
    # see into the box, and the (true) news wins.
    out = labels(*CARRIED_OUT, leave("Anne", "kitchen"), carry("Beth", "apple", "kitchen"),
                 put("Beth", "apple", "box"), leave("Beth", "kitchen"), enter("Anne", "kitchen"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, ANNE_CONTAINER)
    assert q["answer"] == "box" and not q["false_belief"]


def test_the_message_wins_after_a_break():
    # A move between rooms takes no modifier (STORY_FORMAT.md): she cannot be distracted while
    # the apple is carried out, but any distraction since is a break (2026-11-27): distracted
    # while Erin came in, she cannot know whether the apple came back meanwhile. The message
    # wins, a false belief.
    out = labels(*CARRIED_OUT, enter("Erin", "kitchen", distracted=["Anne"]),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    q = ask(out, ANNE_CONTAINER)
    assert q["answer"] == "box" and q["false_belief"]
    # Stepping out and back is a break too.
    out = labels(*CARRIED_OUT, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    assert answer(out, ANNE_CONTAINER) == "box"
    # Away while it was carried out, she does not know it left.
    out = labels(*CARL_SAW_THE_BOX, leave("Anne", "kitchen"), enter("Beth", "kitchen"),
                 carry("Beth", "apple", "garden"), enter("Anne", "kitchen"),
                 tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
    assert answer(out, ANNE_CONTAINER) == "box"


# Anne, Beth and Erin entered the kitchen. Erin moved the apple to the basket. Erin moved the
# apple to the garden, leaving the basket in its original location. Carl (who saw the apple put
# in the box in the kitchen before Anne and Beth came, and left) told Dave that it is in the box.
WATCHED_TOGETHER = (enter("Carl", "kitchen"), put("Carl", "apple", "box"), leave("Carl", "kitchen"),
                    enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Erin", "kitchen"),
                    put("Erin", "apple", "basket"), carry("Erin", "apple", "garden"),
                    tell("Carl", "Dave", BOX))
BETH_ABOUT_ANNE = "In which container does Beth think that Anne will search for the apple?"


def test_the_order_two_chain_knows_it_is_not_there():
    # ... Dave told privately to Anne that the apple is in the box; Beth overheard it. Beth
    # watched Anne watch the apple leave and stayed with her: Beth knows Anne knows it is not
    # in the kitchen. Neither Beth nor her model of Anne is asked where it is.
    for max_order in (2, 3, 4):
        out = labels(*WATCHED_TOGETHER, tell("Dave", "Anne", BOX, peeking=["Beth"]),
                     max_order=max_order)
        for q in (ANNE_CONTAINER, "In which container will Beth search for the apple?",
                  BETH_ABOUT_ANNE, "In which room does Beth think that Anne will search for "
                  "the apple?"):
            assert ask(out, q) is None, (max_order, q)
        assert answer(out, "In which container does Beth think that Dave will search for the "
                           "apple?") == "box"
    t = track(story(*WATCHED_TOGETHER, tell("Dave", "Anne", BOX, peeking=["Beth"])), 4)
    assert t.location(("Beth", "Anne", "Beth"), "apple") == (None, "")
    # A break in Beth's chain: Beth stepped out and back. She did not see Anne stay: the news
    # wins for her and for her model of Anne; Anne, who stayed, still ignores it.
    out = labels(*WATCHED_TOGETHER, leave("Beth", "kitchen"), enter("Beth", "kitchen"),
                 tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert ask(out, ANNE_CONTAINER) is None
    assert answer(out, BETH_ABOUT_ANNE) == "box"
    # A break in Anne's, seen by Beth: Anne stepped out and back. Both adopt it for Anne; Beth,
    # who stayed, still ignores it herself.
    out = labels(*WATCHED_TOGETHER, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                 tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, ANNE_CONTAINER) == "box" and answer(out, BETH_ABOUT_ANNE) == "box"
    assert ask(out, "In which container will Beth search for the apple?") is None
    # A break in Anne's that nobody sees: distracted, Anne adopts it; Beth thinks she ignores it.
    out = labels(*WATCHED_TOGETHER, enter("Dave", "kitchen", distracted=["Anne"]),
                 leave("Dave", "kitchen"), tell("Dave", "Anne", BOX, peeking=["Beth"]))
    assert answer(out, ANNE_CONTAINER) == "box"
    assert ask(out, BETH_ABOUT_ANNE) is None


def test_a_public_broadcast_of_the_stale_claim():
    # ... Dave entered the kitchen. Dave told out loud that the apple is in the box. Anne and
    # Beth saw the apple leave and stayed: they ignore it, and each knows the other does.
    out = labels(*WATCHED_TOGETHER, enter("Dave", "kitchen"), announce("Dave", BOX))
    for q in (ANNE_CONTAINER, "In which container will Beth search for the apple?",
              BETH_ABOUT_ANNE):
        assert ask(out, q) is None, q
    # They know what Dave believes; Dave, who did not see it leave, thinks they believe him.
    assert answer(out, "In which container does Anne think that Dave will search for the "
                       "apple?") == "box"
    assert answer(out, "In which container does Dave think that Anne will search for the "
                       "apple?") == "box"
    assert answer(out, "In which container will Dave search for the apple?") == "box"


def test_a_claim_is_judged_the_same_whoever_relays_it():
    # Every story of this section, the message passed on by one or two people (Dave; Frank and
    # Dave) or said by its first speaker, Carl: the receiver's belief is the same whoever relays
    # it where what she saw decides (she knows where the apple is, or where it is not).
    prefixes = {"carried out": CARRIED_OUT,
                "brought back": (*CARRIED_OUT, carry("Beth", "apple", "kitchen"),
                                 put("Beth", "apple", "basket")),
                "distracted since": (*CARRIED_OUT, enter("Erin", "kitchen", distracted=["Anne"])),
                "out and back": (*CARRIED_OUT, leave("Anne", "kitchen"), enter("Anne", "kitchen")),
                "watched together": WATCHED_TOGETHER[:-1]}
    for name, prefix in prefixes.items():
        for claim in (BOX, ("apple", "room_location", "kitchen")):
            told = {}
            for relays in ((), ("Dave",), ("Frank", "Dave")):
                chain = ("Carl", *relays, "Anne")
                t = track(story(*prefix, *(tell(s, r, claim) for s, r in zip(chain, chain[1:]))))
                why = [v[0] for k, v in t.kept.items() if k[1] == ("Anne",)]
                told[relays] = (t.location(("Anne",), "apple"), why)
            assert told[("Dave",)] == told[("Frank", "Dave")], (name, claim)
            if name in ("distracted since", "out and back"):
                # After a break, what she saw no longer decides. Only the test of stale news
                # (2026-11-25) is left, and it judges the speaker's information: she knows how
                # old Carl's is (she saw him see the box and leave before she moved the apple),
                # not Dave's, who may have seen it brought back while she could not see.
                assert told[()] == ((None, ""), ["stale"]), (name, claim)
                assert told[("Dave",)][0][0] == "kitchen", (name, claim)
            else:
                assert told[()][0] == told[("Dave",)][0], (name, claim)
