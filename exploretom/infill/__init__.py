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

Modules: `steps` (what each step conveys and the facts the judge checks), `prompts`, `replies`
(reply schemas, verdicts, candidates rejected before judging), `jobs` (one story's progress),
`infiller` (the batched rounds over many stories) and `command` (`python -m exploretom infill`).
"""
