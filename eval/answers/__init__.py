"""The one answer parser: evaluation scores and RL rewards both come from here.

A completion is expected to be exactly one `<think>...</think>` block followed by exactly one
`<answer>...</answer>` block (DESIGN.md; ToM-Synth eq. 3-5). Reasoning is never scored: only the
answer is compared with the gold under the row's `answer_type`.

Extraction (`extract_answer`):
1. Everything up to the last `</think>` is reasoning and ignored.
2. `<answer>...</answer>` blocks after it are the answer. Several blocks with different contents
   (normalised, signs kept: `-42` and `42` differ) are returned joined by newlines, so the
   comparison sees several answers and marks them wrong.
3. Fallback, only when no answer block exists and `fallback=True` (evaluation of models that do
   not use the tags; never used for RL outcome credit because that requires the format): within
   the last `FALLBACK_WINDOW` characters after the last `</think>`, the text of the last
   "answer: X" / "the answer is X" line, else the last `\\boxed{X}`, else an unclosed trailing
   `<answer>X`, else the whole remaining reply when it is at most `SHORT_REPLY_CHARS` long,
   else, for a multiple-choice question (`choices` given; `score` gives them for `choice` rows),
   the first paragraph of a reply that opens with an option label (`B. <long option text>`) or
   a reply that is exactly one option's text. A reply whose `<think>` is never closed has no
   answer.

Comparison (`is_correct`), by answer type:
- `choice`: the gold is a letter among `choices`. `B`, `(B)`, `B.`, `B) text`, `Option B`,
  `the answer is B` or the exact option text name B. An answer naming two or more different
  letters or options is wrong.
- `yes_no`: yes or no (`Yes.`, `No, she does not`); an answer saying both is wrong.
- `short`: a name (room, container, person). Correct when the normalised answer is the gold, or
  when it contains the gold in a short phrase ("in the basket") that is not a list and names no
  other candidate from `choices` (or, without choices, adds only function words).
- `knowledge`: `knows about it` / `does not know about it`; the negation must match.
- `number`: mathematical equivalence, for counts, AIME integers and cloze math answers. Blanks
  separated by `;` are compared one by one, in order. A gold that is one real number (`42`,
  `0.015`, `\\sqrt{3}`, `x = 5`, `10 cm`) is compared by value: `42.0`, `\\boxed{42}`, `$42$`,
  `1/2` = `0.5` = `\\frac{1}{2}`, `2\\sqrt{2}` = `\\sqrt{8}`, or a short sentence whose only number
  it is; an answer with several different numbers, or with other mathematics around its number
  (`1-5i`, `\\pm 2`), is wrong. Any other gold is compared structurally after LaTeX normalisation:
  expressions by value (sympy; variables sampled at fixed points), complex numbers (`1-5i`),
  relations side by side (`y=\\pm\\sqrt{3}x` is the pair y = ±√3·x), tuples and intervals element
  by element with their brackets, solution lists, sets and unions in any order. A word gold
  (`\\text{parabola}`) follows the `short` rule; other text must match after normalisation.

Every public function is total on strings (it never raises on model output, however large) and
deterministic. Work is bounded by size caps, never by timeouts, so a verdict cannot depend on the
load of the machine.

Layout (one job per module, no import cycles):
- `limits`: the size caps (`FALLBACK_WINDOW`, `SHORT_REPLY_CHARS`, `MAX_ANSWER_CHARS`, ...).
- `text`: normalisation and option mentions shared by extraction and the rules.
- `extract`: `check_format` and `extract_answer`.
- `short`, `choice` (with `chosen_option`), `yes_no`, `knowledge`, `number`: the rule of each
  answer type; `number` reads mathematics with `latex` (LaTeX to tokens), `algebra` (tokens to
  exact or sympy values) and `structure` (relations, tuples, sets and their equivalence).
- `careful`: the careful reading every answer read is checked by (negations, hedges,
  self-corrections, reasons naming other answers, a belief beside the reality; `judge`), from
  `mentions` (the answers a text names, and where), `clauses` (where each stands: its sentence
  and clause, a negation, a reason, an alternative) and `asked` (what the question asks for).
- `verdict`: `is_correct`, `score` and the rewards.
Import the public names from `eval.answers`; the modules are internal.
"""
from __future__ import annotations

from eval.answers.careful import NO_ANSWER
from eval.answers.choice import chosen_option
from eval.answers.extract import check_format, extract_answer, tagged, think_text
from eval.answers.reading import Reading, read_answer
from eval.answers.text import normalize
from eval.answers.verdict import Verdict, format_reward, is_correct, outcome_reward, score

__all__ = [
    "NO_ANSWER",
    "Reading",
    "read_answer",
    "Verdict",
    "check_format",
    "extract_answer",
    "tagged",
    "think_text",
    "chosen_option",
    "normalize",
    "is_correct",
    "score",
    "format_reward",
    "outcome_reward",
]
