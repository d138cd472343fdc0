"""Iterative story infilling with an LLM judge (ExploreToM paper, section 2.3 and appendix C.2).

A story structure becomes natural prose one action at a time: each step asks the generator to
continue the infilled story so far so that it conveys the next action, under a length desideratum
(one sentence, or up to two) and a style desideratum (plain narration, or dialogue in direct
quotes) drawn per step from a seeded RNG, optionally with character goals and a narrated opening
(one call per story each). One call returns `--candidates` alternative continuations. After each
step an LLM judge is shown the facts the tracker holds after that action (world state, first- and
second-order beliefs and knowledge, in plain sentences) and checks that the story so far plus the
candidate still lets a reader conclude every one of them; candidates are tried in order, and when
all are rejected the generator is asked again, up to `--max-retries` more times, told why the
earlier versions failed. A story is kept (`infilled.ok`) only if every step passed; failed stories
are written too, with every attempt and verdict, so the failure rate is visible and a re-run
continues where it stopped.

Infilling is sequential within a story and parallel across stories: each round sends the current
request of every active story to the backend as one batch.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from pydantic import field_validator
from tqdm.auto import tqdm

from eval.backends.base import Backend, Completion, GenerationConfig
from exploretom.jsonl import Appender, InputError, iter_lines, resume
from exploretom.label import story_text
from exploretom.llm_backend import add_backend_arguments, backends_from_args, close_backends
from exploretom.llm_json import ReplyError, StrictReply, completion_text, parse_model
from exploretom.questions import CONTAINER, KNOWLEDGE, KNOWS, ROOM, STATE, generate_questions
from exploretom.render import action_sentences, the
from exploretom.story import Story, StoryFormatError, parse_story
from exploretom.tracker import StoryError, Tracker

LENGTHS = ("in a single sentence", "in one or two sentences")
STYLES = {
    "declarative": "Write it as plain narration, without any dialogue.",
    "conversational": "Write it as conversation: let the characters' own words, in direct "
                      "quotes, carry what happens.",
}
MAX_CANDIDATE_CHARS = 900
MAX_NARRATION_CHARS = 700


# -- facts the judge checks ------------------------------------------------------------------------
def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _nest(people: list[str], claim: str, positive: bool) -> str:
    """(['Anne', 'Beth'], 'the apple is salted', False) ->
    'Anne does not believe that Beth believes that the apple is salted.'"""
    inner = "".join(f"{p} believes that " for p in people[1:]) + claim
    verb = "believes" if positive else "does not believe"
    return f"{people[0]} {verb} that {inner}."


def fact_sentence(q: dict[str, Any]) -> str | None:
    """A question and its tracked answer as a plain statement (None for memory questions)."""
    thing, answer, people = q["thing"], q["answer"], q["people"]
    if q["kind"] == "ground_truth":
        return f"{_cap(the(thing))} is now in {the(answer)}."
    if q["kind"] != "belief":
        return None
    if q["property"] in (ROOM, CONTAINER):
        return _nest(people, f"{the(thing)} is in {the(answer)}", True)
    if q["property"] == STATE:
        return _nest(people, f"{the(thing)} {q['state_value']}", answer == "yes")
    if q["property"] == KNOWLEDGE:
        if len(people) == 1:
            verb = "knows" if answer == "yes" else "does not know"
            return f"{people[0]} {verb} about {the(thing)}."
        if answer == KNOWS:
            return _nest(people[:-1], f"{people[-1]} knows about {the(thing)}", True)
        # The tracker holds no belief that they know, which is weaker than believing they don't.
        outer = people[:-1]
        inner = "".join(f"{p} believes that " for p in outer[1:])
        return f"As far as {outer[0]} is aware, {inner}{people[-1]} does not know about {the(thing)}."
    return None


def tracked_facts(t: Tracker, max_order: int = 2) -> list[str]:
    """Everything the tracker holds after its last action, orders 0..max_order, as sentences."""
    facts: dict[str, None] = {}
    for obj, state_type, value in t.state_values:
        if t.belief((), ("state", obj, state_type)) == value:
            facts[f"{_cap(the(obj))} {value}."] = None
    for q in generate_questions(t):
        if q["order"] <= max_order:
            sentence = fact_sentence(q)
            if sentence:
                facts[sentence] = None
    return list(facts)


@dataclass
class Step:
    """What one infilling step must convey and preserve."""

    action_index: list[int]
    sentence: str  # the canonical rendering of the action(s), modifiers included
    facts: list[str]
    length: str
    style: str


def plan_steps(story: Story, rng: random.Random, max_order: int = 2) -> list[Step]:
    """One step per action, each with the tracker's facts after it and seeded desiderata."""
    t = Tracker(max_order)
    steps = []
    for i, action in enumerate(story.actions):
        t.apply(action)
        sentence = action_sentences(action, t.left_containers[i], t.action_rooms[i], t.people)
        steps.append(Step([i], sentence,
                          tracked_facts(t, max_order), rng.choice(LENGTHS), rng.choice(list(STYLES))))
    return steps


# -- replies ---------------------------------------------------------------------------------------
class Continuations(StrictReply):
    continuations: list[str]


class Goals(StrictReply):
    goals: dict[str, str]


class Opening(StrictReply):
    opening: str


class StepVerdict(StrictReply):
    conveys_event: bool
    contradicted_facts: list[int]
    adds_events: bool
    reason: str = ""

    @field_validator("contradicted_facts", mode="before")
    @classmethod
    def _numbers(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, list):  # "3" for 3 is a harmless slip; anything else stays invalid
            return [int(x) if isinstance(x, str) and x.strip().isdigit() else x for x in v]
        return v


def step_rejection(verdict: StepVerdict, n_facts: int) -> str | None:
    if not verdict.conveys_event:
        return "event_not_conveyed"
    if any(1 <= k <= n_facts for k in verdict.contradicted_facts):
        return "mental_state_violated"
    if verdict.adds_events:
        return "invented_events"
    return None


# -- prompts (the structure of the paper's figures 9-12, in this project's words) ----------------
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


# -- one story's progress --------------------------------------------------------------------------
def _clean(text: str) -> str:
    return " ".join(text.split())


def _sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])[\"')\]]*\s+", text.strip()) if s])


_TEMPLATE_LEFTOVER = re.compile(r"[{}]|^\s*(story\s+)?continuation\s*\d*\s*:|new event\s*:", re.I)


def candidate_problem(text: str) -> str | None:
    """A mechanical defect that makes judging pointless (reason slug), or None."""
    if not text.strip():
        return "candidate_empty"
    if len(text) > MAX_CANDIDATE_CHARS:
        return "candidate_too_long"
    if _TEMPLATE_LEFTOVER.search(text):
        return "candidate_template_text"
    return None


@dataclass
class StoryJob:
    raw: dict[str, Any]
    story: Story
    steps: list[Step]
    people: list[dict[str, str]]
    objects: list[str]
    setting: str
    script: str
    need_goals: bool
    need_narration: bool
    goals: dict[str, str] = field(default_factory=dict)
    narration: str = ""
    prelude_tries: Counter = field(default_factory=Counter)
    prelude_notes: dict[str, str] = field(default_factory=dict)  # why the last try failed
    errors: list[str] = field(default_factory=list)
    done_steps: list[dict[str, Any]] = field(default_factory=list)
    step_i: int = 0
    attempts: int = 0  # generator calls for the current step
    candidates: list[str] = field(default_factory=list)
    cand_i: int = 0
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    failed: str = ""  # reason the story failed, "" while running or when ok
    request_error: str = ""  # a request failed for good: the story is left for a re-run
    finished: bool = False

    @property
    def in_prelude(self) -> bool:
        return self.need_goals or self.need_narration

    def so_far(self) -> str:
        return "\n".join(([self.narration] if self.narration else [])
                         + [s["text"] for s in self.done_steps if s["text"]])


def _people_of(story: Story, t: Tracker) -> list[dict[str, str]]:
    roles = {}
    for p in (story.context or {}).get("people", []) or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            roles[p["name"]] = str(p.get("role") or "")
    return [{"name": n, "role": roles.get(n, "")} for n in t.people]


def prepare(raw: dict[str, Any], seed: int, max_order: int, goals: bool, narration: bool) -> StoryJob:
    """A job for one labelled story; StoryFormatError/StoryError if the structure is invalid."""
    story = parse_story(raw)
    rng = random.Random(f"{seed}:{story.id}")
    steps = plan_steps(story, rng, max_order)
    t = Tracker(max_order).apply_all(story.actions)
    ctx = story.context or {}
    setting = ctx.get("description") if isinstance(ctx.get("description"), str) else ""
    return StoryJob(raw=raw, story=story, steps=steps, people=_people_of(story, t),
                    objects=list(t.objects), setting=setting, script=story_text(t),
                    need_goals=goals, need_narration=narration)


@dataclass
class InfillStats:
    stories: int = 0
    ok: int = 0
    already: int = 0
    invalid_input: int = 0
    request_errors: int = 0  # stories left unwritten because a request failed
    steps: int = 0
    attempts: int = 0
    rejections: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    prelude_errors: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        mean = self.attempts / self.steps if self.steps else 0.0
        rej = " ".join(f"{k}={v}" for k, v in self.rejections.most_common()) or "none"
        fail = " ".join(f"{k}={v}" for k, v in self.failures.most_common())
        extra = f" failures: {fail}" if fail else ""
        pre = " ".join(f"{k}={v}" for k, v in self.prelude_errors.most_common())
        extra += f" prelude_errors: {pre}" if pre else ""
        return (f"infill: stories={self.stories} ok={self.ok} failed={self.stories - self.ok} "
                f"already_done={self.already} invalid_input={self.invalid_input} "
                f"request_errors={self.request_errors} "
                f"mean_attempts={mean:.2f} rejections: {rej}{extra}")


class Infiller:
    """Drives many StoryJobs in rounds: one generator batch, then one judge batch, per round."""

    def __init__(self, generator: Backend, judge: Backend, *, candidates: int = 3,
                 max_retries: int = 2, gen_config: GenerationConfig | None = None,
                 judge_config: GenerationConfig | None = None, progress: bool = False,
                 log: Callable[[str], None] = lambda m: None) -> None:
        if candidates < 1 or max_retries < 0:
            raise ValueError("--candidates must be >= 1 and --max-retries >= 0")
        self.gen, self.judge = generator, judge
        self.candidates, self.max_retries = candidates, max_retries
        self.gen_config = gen_config or GenerationConfig(max_new_tokens=768, temperature=0.8)
        self.judge_config = judge_config or GenerationConfig(max_new_tokens=256, temperature=0.0)
        self.progress, self.log = progress, log
        self.stats = InfillStats()

    @property
    def max_calls(self) -> int:
        return 1 + self.max_retries

    # -- requests ------------------------------------------------------------------------------
    def _gen_requests(self, jobs: list[StoryJob]) -> list[tuple[StoryJob, str, list]]:
        out = []
        for job in jobs:
            for kind, needed, make in (
                    ("goals", job.need_goals, lambda: goals_prompt(job.script, job.people)),
                    ("narration", job.need_narration,
                     lambda: narration_prompt(job.script, job.setting))):
                if needed:
                    prompt = make()
                    if kind in job.prelude_notes:  # a retry: say why, and differ from the cached try
                        prompt[-1]["content"] += (
                            f"\n\nA previous reply was rejected ({job.prelude_notes[kind]}); this is "
                            f"attempt {job.prelude_tries[kind] + 1} of {self.max_calls}.")
                    out.append((job, kind, prompt))
            if not job.in_prelude and not job.candidates:
                job.attempts += 1
                step = job.steps[job.step_i]
                out.append((job, "step", infill_prompt(
                    step, job.so_far(), job.people, job.goals, self.candidates, job.objects,
                    job.feedback, job.attempts, self.max_calls)))
        return out

    def _set_aside(self, job: StoryJob, c: Completion) -> bool:
        """A request that failed for good (after the backend's own retries) says nothing about
        the story: it is not written, so the next run infills it again."""
        if c.ok:
            return False
        if not job.request_error:
            job.request_error = str(c.error)[:300]
            self.log(f"{job.story.id}: request failed ({job.request_error}); left for a re-run")
        job.finished = True
        return True

    def _on_prelude(self, job: StoryJob, kind: str, c: Completion) -> None:
        if self._set_aside(job, c):
            return
        names = [p["name"] for p in job.people]
        job.prelude_tries[kind] += 1
        try:
            text = completion_text(c)
            if kind == "goals":
                goals = {k.strip(): _clean(v) for k, v in parse_model(Goals, text).goals.items()}
                goals = {n: goals[n] for n in names if goals.get(n) and len(goals[n]) <= 400}
                if not goals:
                    raise ReplyError("schema", "no goal for any character of the story")
                job.goals, job.need_goals = goals, False
            else:
                opening = _clean(parse_model(Opening, text).opening)
                if not opening:
                    raise ReplyError("empty", "empty opening")
                if len(opening) > MAX_NARRATION_CHARS or _sentences(opening) > 3:
                    raise ReplyError("too_long", "the opening is longer than three sentences")
                named = [n for n in names if re.search(rf"\b{re.escape(n)}\b", opening)]
                if named:
                    raise ReplyError("names_people", f"the opening names {', '.join(named)}")
                job.narration, job.need_narration = opening, False
        except ReplyError as e:
            self.log(f"{job.story.id}: {kind}: {e}")
            job.prelude_notes[kind] = str(e)[:200]
            if job.prelude_tries[kind] >= self.max_calls:
                # Goals and the opening only flavour the story: go on without them.
                job.errors.append(f"{kind}: {e}")
                self.stats.prelude_errors[f"{kind}_{e.reason}"] += 1
                setattr(job, f"need_{kind}", False)

    def _on_step_reply(self, job: StoryJob, c: Completion) -> None:
        if self._set_aside(job, c):
            return
        try:
            texts = parse_model(Continuations, completion_text(c)).continuations
            texts = [_clean(t) for t in texts][: self.candidates]
            if not texts:
                raise ReplyError("empty", "no continuations")
        except ReplyError as e:
            reason = f"infill_{e.reason}"
            job.verdicts.append({"attempt": job.attempts, "candidate": None, "text": "",
                                 "ok": False, "reason": reason, "note": str(e)[:300],
                                 "violated": []})
            self.stats.rejections[reason] += 1
            job.feedback.append(f"your previous reply could not be used ({e.reason}); reply with "
                                "the JSON object only")
            self._next_attempt(job)
            return
        job.candidates, job.cand_i = texts, 0
        self._skip_defective(job)

    def _skip_defective(self, job: StoryJob) -> None:
        """Reject, without asking the judge, candidates with mechanical defects."""
        while job.cand_i < len(job.candidates):
            text = job.candidates[job.cand_i]
            problem = candidate_problem(text)
            if problem is None:
                return
            self._reject(job, text, problem, problem.replace("_", " "), [])
        job.candidates = []
        self._next_attempt(job)

    def _reject(self, job: StoryJob, text: str, reason: str, note: str, violated: list[str]) -> None:
        job.verdicts.append({"attempt": job.attempts, "candidate": job.cand_i, "text": text,
                             "ok": False, "reason": reason, "note": note, "violated": violated})
        self.stats.rejections[reason] += 1
        detail = f" (contradicts: {'; '.join(violated[:3])})" if violated else ""
        job.feedback.append(f'"{text[:200]}" was rejected: {note or reason}{detail}')
        job.feedback = job.feedback[-6:]
        job.cand_i += 1

    def _next_attempt(self, job: StoryJob) -> None:
        job.candidates = []
        if job.attempts >= self.max_calls:
            step = job.steps[job.step_i]
            job.done_steps.append({"action_index": step.action_index, "text": "",
                                   "attempts": job.attempts, "verdicts": job.verdicts})
            job.failed = "retries_exhausted"
            job.finished = True

    def _on_verdict(self, job: StoryJob, c: Completion) -> None:
        if self._set_aside(job, c):
            return
        step = job.steps[job.step_i]
        text = job.candidates[job.cand_i]
        try:
            verdict = parse_model(StepVerdict, completion_text(c), max_chars=20_000)
            reason = step_rejection(verdict, len(step.facts))
            note = _clean(verdict.reason)[:300]
            violated = [step.facts[k - 1] for k in verdict.contradicted_facts
                        if isinstance(k, int) and 1 <= k <= len(step.facts)]
        except ReplyError as e:
            reason, note, violated = f"judge_{e.reason}", str(e)[:300], []
        if reason is None:
            job.verdicts.append({"attempt": job.attempts, "candidate": job.cand_i, "text": text,
                                 "ok": True, "reason": "", "note": note, "violated": []})
            job.done_steps.append({"action_index": step.action_index, "text": text,
                                   "attempts": job.attempts, "verdicts": job.verdicts})
            job.step_i += 1
            job.attempts, job.candidates, job.cand_i = 0, [], 0
            job.verdicts, job.feedback = [], []
            if job.step_i == len(job.steps):
                job.finished = True
            return
        self._reject(job, text, reason, note, violated)
        self._skip_defective(job)

    # -- rounds --------------------------------------------------------------------------------
    def round(self, jobs: list[StoryJob]) -> None:
        requests = self._gen_requests([j for j in jobs if not j.finished])
        if requests:
            def on_gen(i: int, c: Completion) -> None:
                job, kind, _ = requests[i]
                if kind == "step":
                    self._on_step_reply(job, c)
                else:
                    self._on_prelude(job, kind, c)

            self.gen.generate([r[2] for r in requests], self.gen_config, on_result=on_gen)
        to_judge = [j for j in jobs if not j.finished and not j.in_prelude and j.candidates]
        if to_judge:
            prompts = [judge_prompt(j.steps[j.step_i], j.so_far(), j.candidates[j.cand_i], j.people)
                       for j in to_judge]
            self.judge.generate(prompts, self.judge_config,
                                on_result=lambda i, c: self._on_verdict(to_judge[i], c))

    def result(self, job: StoryJob) -> dict[str, Any]:
        ok = not job.failed and job.step_i == len(job.steps)
        self.stats.stories += 1
        self.stats.ok += ok
        if not ok:
            self.stats.failures[job.failed or "unfinished"] += 1
        for s in job.done_steps:
            self.stats.steps += 1
            self.stats.attempts += s["attempts"]
        out = dict(job.raw)
        out["infilled"] = {
            "text": job.so_far() if ok else "",
            "ok": ok,
            "reason": "" if ok else (job.failed or "unfinished"),
            "steps": job.done_steps,
            "narration": job.narration,
            "goals": job.goals,
            "model": self.gen.model,
            "judge_model": self.judge.model,
            "errors": job.errors,
        }
        return out

    def run(self, jobs: Iterator[StoryJob], write: Callable[[dict[str, Any]], None],
            active: int = 64, total: int | None = None) -> InfillStats:
        """Keep up to `active` stories in flight; write each as soon as it finishes."""
        bar = tqdm(total=total, desc="infill", unit="story", disable=not self.progress,
                   file=sys.stderr)
        try:
            return self._run(jobs, write, active, bar)
        finally:
            bar.close()

    def _run(self, jobs, write, active, bar) -> InfillStats:
        pool: list[StoryJob] = []
        exhausted = False
        while True:
            while not exhausted and len(pool) < active:
                job = next(jobs, None)
                if job is None:
                    exhausted = True
                else:
                    pool.append(job)
            if not pool:
                return self.stats
            self.round(pool)
            for job in [j for j in pool if j.finished]:
                if job.request_error:
                    self.stats.request_errors += 1
                else:
                    write(self.result(job))
                bar.update(1)
                bar.set_postfix(ok=self.stats.ok, refresh=False)
            pool = [j for j in pool if not j.finished]


# -- input -----------------------------------------------------------------------------------------
def read_jobs(path: str, done: set, seed: int, max_order: int, goals: bool, narration: bool,
              stats: InfillStats, log: Callable[[str], None], limit: int | None = None
              ) -> Iterator[StoryJob]:
    """Jobs for the stories of a labelled JSONL not yet in `done`; invalid lines are reported
    (file and line) and skipped."""
    seen: set = set()
    given = 0
    for n, line in iter_lines(path):
        if limit is not None and given >= limit:
            return
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            stats.invalid_input += 1
            log(f"{path}: line {n}: invalid JSON, skipped")
            continue
        if not isinstance(raw, dict) or "error" in raw:
            stats.invalid_input += 1
            log(f"{path}: line {n}: not a labelled story, skipped")
            continue
        sid = raw.get("id")
        if not isinstance(sid, (str, int)) or sid in seen:
            stats.invalid_input += 1
            log(f"{path}: line {n}: missing or repeated id {sid!r}, skipped")
            continue
        seen.add(sid)
        if sid in done:
            stats.already += 1
            continue
        try:
            job = prepare(raw, seed, max_order, goals, narration)
        except (StoryFormatError, StoryError) as e:
            stats.invalid_input += 1
            log(f"{path}: line {n}: {e}, skipped")
            continue
        given += 1
        yield job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="labelled stories (JSONL from sample --label, label or search)")
    parser.add_argument("-o", "--output", required=True, help="infilled stories (JSONL, appended to)")
    parser.add_argument("--candidates", type=int, default=3,
                        help="continuations asked for in each generator call (default 3)")
    parser.add_argument("--max-retries", type=int, default=2,
                        help="extra generator calls per step once all candidates are rejected "
                             "(default 2)")
    parser.add_argument("--goals", action="store_true", help="sample a goal per character first")
    parser.add_argument("--narration", action="store_true",
                        help="open the story with a two-sentence scene without people")
    parser.add_argument("--judge-order", type=int, default=2,
                        help="highest belief order of the facts the judge checks (default 2)")
    parser.add_argument("--active", type=int, default=64,
                        help="stories infilled in parallel (default 64)")
    parser.add_argument("--limit", type=int, help="infill at most this many new stories")
    parser.add_argument("--seed", type=int, default=0, help="seed of the desiderata and sampling")
    parser.add_argument("-q", "--quiet", action="store_true")
    add_backend_arguments(parser, temperature=0.8, max_new_tokens=768)


def _check_input(path: str) -> None:
    """InputError (one line naming the file) unless some line looks like a labelled story."""
    lines = 0
    for _, line in iter_lines(path):
        lines += 1
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(raw, dict) and "error" not in raw and isinstance(raw.get("actions"), list):
            return
    raise InputError(f"{path}: no labelled story in {lines} line(s) (make them with "
                     "python -m exploretom sample --label or label)")


def run(args: argparse.Namespace) -> int:
    if args.judge_order < 1 or args.active < 1 or (args.limit is not None and args.limit < 0):
        raise ValueError("--judge-order and --active must be >= 1, --limit >= 0")
    if args.candidates < 1 or args.max_retries < 0:
        raise ValueError("--candidates must be >= 1 and --max-retries >= 0")
    _check_input(args.input)  # a missing, unreadable or storyless input fails before any model loads
    log = (lambda m: None) if args.quiet else _log
    generator, judge = backends_from_args(args)
    try:
        infiller = Infiller(
            generator, judge, candidates=args.candidates, max_retries=args.max_retries,
            gen_config=GenerationConfig(max_new_tokens=args.max_new_tokens,
                                        temperature=args.temperature, seed=args.seed),
            judge_config=GenerationConfig(max_new_tokens=256, temperature=0.0, seed=args.seed),
            progress=not args.quiet, log=log)
        done = resume(args.output)
        jobs = read_jobs(args.input, done, args.seed, args.judge_order, args.goals,
                         args.narration, infiller.stats, log, args.limit)
        total = sum(1 for _ in iter_lines(args.input))
        if args.limit is not None:
            total = min(total, args.limit)
        with Appender(args.output) as out:
            stats = infiller.run(jobs, out.write, args.active, total=max(total - len(done), 0))
    finally:
        close_backends(generator, judge)
    print(stats.summary())
    if stats.request_errors:
        print(f"error: {stats.request_errors} stories were not written because a request failed "
              "(see the messages above); run the same command again to infill them",
              file=sys.stderr)
        return 3
    return 0


def _log(message: str) -> None:
    tqdm.write(message, file=sys.stderr)  # keeps the progress bar intact

