"""The context sampler's rounds (`ContextSampler`): every attempt's context request as one batch,
then the update proposals of the contexts that passed, then one judge call per proposed update.
Attempts are numbered from the seed, and each written or failed one is appended as soon as it and
every earlier attempt of its round have ended (one whose request failed is not written: the next
run tries it again), so a re-run skips them and goes on until `n` contexts are written or the
attempts are spent. Writing in attempt order makes the file, and the stories later drawn from
it, depend on the seed and the replies, not on which reply came back first."""
from __future__ import annotations

import random
import sys
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import ValidationError
from tqdm.auto import tqdm

from eval.backends.base import Backend, Completion, GenerationConfig
from eval.cli_common import bracketed_counts, share
from eval.jsonl import Appender, resume
from exploretom.contexts.pools import Pools
from exploretom.contexts.prompts import context_prompt, judge_update_prompt, updates_prompt
from exploretom.contexts.replies import (ContextReply, UpdateReply, UpdateVerdict, build_record,
                                         judge_rejection, normalise_update)
from exploretom.contexts.validation import context_problems, update_problems
from exploretom.llm.json import (ReplyError, completion_text, describe_validation_error, one_line,
                                 parse_json_reply, parse_model)


@dataclass
class ContextSpec:
    people: int
    containers: int = 3
    topics: int = 3
    visible: int = 4
    invisible: int = 3
    min_visible: int = 1
    min_invisible: int = 1

    def __post_init__(self) -> None:
        for name in ("people", "containers", "topics"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1")
        if self.people > 8:
            raise ValueError("--people must be at most 8")
        if self.visible < self.min_visible or self.invisible < self.min_invisible:
            raise ValueError("ask for at least as many visible/invisible updates as the minimum kept")


@dataclass
class ContextStats:
    written: int = 0
    already: int = 0
    failed: Counter = field(default_factory=Counter)  # context failures by reason
    proposed: int = 0  # state updates proposed by the model
    invalid: Counter = field(default_factory=Counter)  # updates dropped before judging, by reason
    judged: int = 0
    rejected: Counter = field(default_factory=Counter)  # judge rejections by reason
    kept: int = 0
    request_errors: int = 0  # attempts left for a later run because a request failed

    def summary(self) -> str:
        return (f"contexts: {self.written} written ({self.already} already there), "
                f"{sum(self.failed.values())} failed{bracketed_counts(self.failed)}; state updates: "
                f"{self.proposed} proposed, {sum(self.invalid.values())} invalid{bracketed_counts(self.invalid)}, "
                f"{self.judged} judged, {sum(self.rejected.values())} rejected{bracketed_counts(self.rejected)}, "
                f"{self.kept} kept; survived: {share(self.written, self.written + sum(self.failed.values()))} "
                f"of this run's context attempts, {share(self.kept, self.proposed)} of the proposed updates")


@dataclass
class _Attempt:
    k: int
    id: str
    setting: str
    names: list[str]
    record: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    pending: int = 0
    request_error: str = ""


class _InAttemptOrder:
    """Holds each ended attempt's write until all earlier attempts of the round have ended."""

    def __init__(self, attempts: list[_Attempt]) -> None:
        self._next = deque(sorted(a.k for a in attempts))
        self._held: dict[int, Callable[[], None] | None] = {}

    def end(self, a: _Attempt, write: Callable[[], None] | None) -> None:
        self._held[a.k] = write
        while self._next and self._next[0] in self._held:
            write = self._held.pop(self._next.popleft())
            if write:
                write()


def context_id(seed: int, k: int) -> str:
    return f"llm_s{seed}_{k:06d}"


def failures_path(output: str | Path) -> Path:
    return Path(str(output) + ".failures.jsonl")


class ContextSampler:
    """Runs the three batched stages over rounds of attempts until `n` contexts are written."""

    def __init__(self, generator: Backend, judge: Backend, spec: ContextSpec, pools: Pools, *,
                 seed: int = 0, gen_config: GenerationConfig | None = None,
                 judge_config: GenerationConfig | None = None, progress: bool = False,
                 log: Callable[[str], None] = lambda m: None) -> None:
        self.gen, self.judge, self.spec, self.pools = generator, judge, spec, pools
        self.seed = seed
        self.gen_config = gen_config or GenerationConfig(max_new_tokens=1024, temperature=0.8, seed=seed)
        self.judge_config = judge_config or GenerationConfig(max_new_tokens=256, temperature=0.0, seed=seed)
        self.progress, self.log = progress, log
        self.source = {"model": generator.model, "judge_model": judge.model}
        self.stats = ContextStats()
        if len(pools.names) < spec.people:
            raise ValueError(f"the name pool has {len(pools.names)} names, {spec.people} needed")

    def attempt(self, k: int) -> _Attempt:
        rng = random.Random(f"{self.seed}:{k}")
        return _Attempt(k, context_id(self.seed, k), rng.choice(self.pools.settings),
                        rng.sample(self.pools.names, self.spec.people))

    def run(self, output: str | Path, n: int, max_attempts: int) -> ContextStats:
        out_ids = resume(output)
        failed_ids = resume(failures_path(output))
        self.stats.already = len(out_ids)
        done = out_ids | failed_ids
        with Appender(output) as out, Appender(failures_path(output)) as fails, \
                tqdm(total=n, initial=min(len(out_ids), n), desc="contexts", unit="context",
                     disable=not self.progress, file=sys.stderr) as bar:
            self._out, self._fails, self._bar = out, fails, bar
            k = 0
            while len(out_ids) + self.stats.written < n:
                budget = max_attempts - len(done)
                if budget <= 0:
                    break
                batch: list[_Attempt] = []
                want = min(n - len(out_ids) - self.stats.written, budget)
                while len(batch) < want:
                    if context_id(self.seed, k) not in done:
                        batch.append(self.attempt(k))
                    k += 1
                done |= {a.id for a in batch}
                self._round(batch)
        return self.stats

    # -- stages --------------------------------------------------------------------------------
    def _set_aside(self, a: _Attempt, error: str) -> None:
        """A request that failed for good says nothing about the context: the attempt is not
        recorded, so a later run tries it again."""
        self.stats.failed["request_failed"] += 1
        self.stats.request_errors += 1
        self.log(f"{a.id}: request failed ({error[:300]}); left for a re-run")
        self._order.end(a, None)

    def _fail(self, a: _Attempt, reason: str, problems: Iterable[str], reply: str = "") -> None:
        self.stats.failed[reason] += 1
        entry = {"id": a.id, "reason": reason, "problems": list(problems)[:20]}
        if reply:
            entry["reply"] = reply[:2000]
        if a.verdicts:
            entry["verdicts"] = a.verdicts
        self._order.end(a, lambda: self._fails.write(entry))
        self.log(f"{a.id}: {reason}: {entry['problems'][0] if entry['problems'] else ''}")

    def _round(self, batch: list[_Attempt]) -> None:
        spec = self.spec
        self._order = _InAttemptOrder(batch)
        kept: list[_Attempt] = []

        def on_context(i: int, c: Completion) -> None:
            a = batch[i]
            if not c.ok:
                return self._set_aside(a, str(c.error))
            text = c.text  # kept in the failures file whatever went wrong, a cut-off reply too
            try:
                completion_text(c)
                reply = parse_model(ContextReply, text)
            except ReplyError as e:
                return self._fail(a, e.reason, [str(e)], text)
            a.record = build_record(reply, a.id, a.setting, spec.containers, spec.topics, self.source)
            problems = context_problems(a.record, people=spec.people, containers=spec.containers,
                                        topics=spec.topics, rooms=2, check_updates=False)
            if problems:
                return self._fail(a, problems[0][0], [m for _, m in problems], text)
            kept.append(a)

        self.gen.generate([context_prompt(a.setting, a.names, spec.people, spec.containers,
                                          spec.topics) for a in batch],
                          self.gen_config, on_result=on_context)
        kept.sort(key=lambda a: a.k)
        with_updates: list[_Attempt] = []

        def on_updates(i: int, c: Completion) -> None:
            a = kept[i]
            if not c.ok:
                return self._set_aside(a, str(c.error))
            text = c.text
            try:
                completion_text(c)
                data = parse_json_reply(text, (dict, list))
                items = data.get("updates") if isinstance(data, dict) else data
                if not isinstance(items, list):
                    raise ReplyError("schema", "field updates: expected a list")
            except ReplyError as e:
                return self._fail(a, f"updates_{e.reason}", [str(e)], text)
            obj = a.record["objects"][0]["name"]
            seen: set[str] = set()
            for j, item in enumerate(items[: 3 * (spec.visible + spec.invisible)]):
                self.stats.proposed += 1
                try:
                    update = normalise_update(UpdateReply.model_validate(item), obj)
                except ValidationError as e:
                    self.stats.invalid["update_schema"] += 1
                    self.log(f"{a.id}: update {j}: {describe_validation_error(e)}")
                    continue
                problems = update_problems(update, obj, f"update {j}")
                if not problems and (update["state_type"] in seen or update["state_value"] in seen):
                    problems = [("update_duplicate", f"update {j}: repeats an earlier state")]
                if problems:
                    self.stats.invalid[problems[0][0]] += 1
                    self.log(f"{a.id}: {problems[0][1]}")
                    continue
                seen |= {update["state_type"], update["state_value"]}
                a.candidates.append(update)
            vis = sum(u["visible"] for u in a.candidates)
            if vis < spec.min_visible or len(a.candidates) - vis < spec.min_invisible:
                return self._fail(a, "too_few_updates", [
                    f"{vis} visible and {len(a.candidates) - vis} invisible usable updates before "
                    f"judging, need {spec.min_visible} and {spec.min_invisible}"], text)
            a.pending = len(a.candidates)
            with_updates.append(a)

        if kept:
            self.gen.generate([updates_prompt(a.record, spec.visible, spec.invisible) for a in kept],
                              self.gen_config, on_result=on_updates)
        with_updates.sort(key=lambda a: a.k)
        jobs = [(a, j) for a in with_updates for j in range(len(a.candidates))]

        def on_verdict(i: int, c: Completion) -> None:
            a, j = jobs[i]
            update = a.candidates[j]
            a.pending -= 1
            if not c.ok:
                a.request_error = a.request_error or str(c.error)
            else:
                self._judged(a, j, update, c)
            if a.pending == 0:
                if a.request_error:
                    self._set_aside(a, a.request_error)
                else:
                    self._finish(a)

        if jobs:
            self.judge.generate([judge_update_prompt(a.record, a.candidates[j]) for a, j in jobs],
                                self.judge_config, on_result=on_verdict)

    def _judged(self, a: _Attempt, j: int, update: dict[str, Any], c: Completion) -> None:
        self.stats.judged += 1
        try:
            verdict = parse_model(UpdateVerdict, completion_text(c), max_chars=20_000)
            reason = judge_rejection(verdict)
            note = one_line(verdict.reason)[:300]
        except ReplyError as e:
            reason, note = f"judge_{e.reason}", str(e)[:300]
        update_verdict = {"update": j, "state_value": update["state_value"],
                          "ok": reason is None, "reason": reason or "", "note": note}
        a.verdicts.append(update_verdict)
        if reason:
            self.stats.rejected[reason] += 1

    def _finish(self, a: _Attempt) -> None:
        accepted = {v["update"] for v in a.verdicts if v["ok"]}
        record = a.record
        record["objects"][0]["state_updates"] = [u for j, u in enumerate(a.candidates) if j in accepted]
        problems = context_problems(record, people=self.spec.people, containers=self.spec.containers,
                                    topics=self.spec.topics, rooms=2,
                                    min_visible=self.spec.min_visible,
                                    min_invisible=self.spec.min_invisible)
        if problems:
            return self._fail(a, problems[0][0], [m for _, m in problems])
        self.stats.written += 1
        self.stats.kept += len(accepted)
        self._order.end(a, lambda: (self._out.write(record), self._bar.update(1)))
