"""The infiller's rounds over many stories (`Infiller`): one generator batch (goals, openings and
the current step of every active story), then one judge batch for the candidate each story is
on; a story is written as soon as it finishes."""
from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from tqdm.auto import tqdm

from eval.backends.base import Backend, Completion, GenerationConfig
from eval.cli_common import share
from exploretom.infill.jobs import StoryJob
from exploretom.infill.prompts import goals_prompt, infill_prompt, judge_prompt, narration_prompt
from exploretom.infill.replies import (MAX_NARRATION_CHARS, Continuations, Goals, Opening,
                                       StepVerdict, candidate_problem, sentence_count,
                                       step_rejection)
from exploretom.llm.json import ReplyError, completion_text, one_line, parse_model


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
                f"mean_attempts={mean:.2f} survived={share(self.ok, self.stories)} "
                f"rejections: {rej}{extra}")


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
                goals = {k.strip(): one_line(v) for k, v in parse_model(Goals, text).goals.items()}
                goals = {n: goals[n] for n in names if goals.get(n) and len(goals[n]) <= 400}
                if not goals:
                    raise ReplyError("schema", "no goal for any character of the story")
                job.goals, job.need_goals = goals, False
            else:
                opening = one_line(parse_model(Opening, text).opening)
                if not opening:
                    raise ReplyError("empty", "empty opening")
                if len(opening) > MAX_NARRATION_CHARS or sentence_count(opening) > 3:
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
            texts = [one_line(t) for t in texts][: self.candidates]
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
            note = one_line(verdict.reason)[:300]
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
