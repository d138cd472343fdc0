"""The infiller's prompts: the structure of the paper's figures 9-12 (character goals, a narrated
opening, the continuation of each step, and the step judge), in this project's words."""
from __future__ import annotations

from exploretom.infill.steps import STYLES, Step

SYSTEM = ("You are a skilled fiction writer who writes in plain, simple words that anyone can "
          "follow. You avoid cliches and stilted phrasing, and you follow instructions exactly.")
JUDGE_SYSTEM = ("You check stories for consistency, carefully and strictly. You answer with JSON "
                "only.")


def characters_line(people: list[dict[str, str]]) -> str:
    return "; ".join(f"{p['name']} ({p['role']})" if p.get("role") else p["name"] for p in people)


def goals_prompt(script: str, people: list[dict[str, str]]) -> list[dict[str, str]]:
    user = f"""Below is the outline of a story and a description of its characters. Suggest one plausible goal for each character, something that could motivate what they do in the outline.

OUTLINE:
{script}

CHARACTERS: {characters_line(people)}

Reply with one JSON object {{"goals": {{"<name>": "<goal in one sentence>", ...}}}}, with one entry for each of these characters and no one else: {", ".join(p["name"] for p in people)}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def narration_prompt(script: str, setting: str) -> list[dict[str, str]]:
    where = f" The story takes place in {setting}." if setting else ""
    user = f"""Below is the outline of a story.{where} Write the opening of the story: two sentences that set the scene, describing only the place, its atmosphere and the moment. Do not mention any person at all, named or unnamed, and do not describe, suggest or foreshadow anything that happens in the outline.

OUTLINE:
{script}

Reply with one JSON object {{"opening": "<the two sentences>"}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def infill_prompt(step: Step, story_so_far: str, people: list[dict[str, str]],
                  goals: dict[str, str], candidates: int, objects: list[str],
                  feedback: list[str], attempt: int, max_attempts: int) -> list[dict[str, str]]:
    goals_text = "; ".join(f"{name}: {goal}" for name, goal in goals.items()) or "(none given)"
    only_one = "".join(f" There is only one {o}: never make a second one." for o in objects)
    retry = ""
    if feedback:
        retry = ("\n\nEARLIER VERSIONS WERE REJECTED (attempt {} of {}). Avoid these problems:\n"
                 .format(attempt, max_attempts) + "\n".join(f"- {f}" for f in feedback))
    user = f"""Continue the story {step.length}, so that it conveys the new event below without changing it: the same people, object, containers, rooms and outcome. Do not contradict anything earlier in the story. Convey the event naturally instead of repeating its wording; it may be implicit, but it must be unambiguous. Do not bring in characters or actions that the event does not describe, and never swap one character for another. Joining several things into one sentence is fine as long as nothing changes. {STYLES[step.style]}

Keep it short and pleasant to read, and vary how sentences start. Stay within common sense: an object never changes place unless someone moves it in the text.{only_one} No notes, comments, titles or bracketed remarks. You may hint at the characters' goals or reasons where that helps the story flow.

Keep in mind: telling someone something privately need not happen face to face (a text message, a phone call, a whisper or a gesture all work), and nobody is in a room unless the story has put them there. If someone secretly watches the event, or is distracted and misses it, say so, and make clear that it applies to this event only.

CHARACTERS: {characters_line(people)}

GOALS: {goals_text}

STORY SO FAR:
{story_so_far or "(the story has not started yet)"}

NEW EVENT: {step.sentence}{retry}

Write {candidates} different versions of the continuation, each {step.length}, with clearly different wording and sentence structure but the same names for objects and rooms. Reply with one JSON object {{"continuations": ["...", ...]}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def judge_prompt(step: Step, story_so_far: str, candidate: str,
                 people: list[dict[str, str]]) -> list[dict[str, str]]:
    facts = "\n".join(f"{k}. {f}" for k, f in enumerate(step.facts, 1)) or "(none)"
    user = f"""A story is being rewritten from a plain list of events into natural prose, one event at a time. Check whether the newest passage is faithful.

CHARACTERS: {characters_line(people)}

STORY SO FAR (already checked):
{story_so_far or "(nothing yet)"}

EVENT THE NEW PASSAGE MUST CONVEY: {step.sentence}

NEW PASSAGE: {candidate}

After this event the following facts hold. Someone who reads the story so far followed by the new passage must still be able to conclude every one of them. A fact may stay implicit, but the passage must not contradict it or make it doubtful, for example by letting someone see or hear what they did not, by placing someone in a room they are not in, or by putting an object somewhere else.
{facts}

Reply with one JSON object:
{{"conveys_event": true or false (the passage clearly conveys the event with the same people, object, place and outcome), "contradicted_facts": [the numbers of the facts the passage contradicts or makes doubtful; empty if none], "adds_events": true or false (the passage invents an action that moves a person or an object, or lets someone see, hear or learn something the event does not say), "reason": "one short sentence"}}"""
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]
