"""Story contexts sampled with an LLM (ExploreToM paper, section 2.1 and appendix C.1).

The offline lexicon (`exploretom/data/contexts.json`) stays the default source of contexts; this
package makes more with a model, in the paper's structure:

1. pools of first names and of settings: the lexicon's, or asked from the model once
   (`--pool llm`, kept in `<output>.pools.json` so a re-run asks the same prompts);
2. one call per context, seeded from the pools (a setting and suggested names): characters with
   roles, a two-sentence situation, a starting room, one alternative room, one object, opaque
   containers that can hold it, and chit-chat topics;
3. one call per context proposing visible and invisible state updates of the object, each a
   sentence with a `{person}` placeholder and a `state_value` completing
   "Does X believe that the <object> ...?";
4. one judge call per proposed update; only updates the judge finds plausible, correctly
   visible or invisible, consistent with their state value, and leaving the object where it is
   and in one piece are kept.

Each context is one JSON line in the schema of one setting of the lexicon (`id, description,
roles, rooms, topics, objects[{name, containers, state_updates}]`) plus `people [{name, role}]`,
`situation` and `source {model, judge_model}`. Every reply is validated (`context_problems`);
rejected contexts go to `<output>.failures.jsonl` with their reason, so a re-run neither loses
nor repeats any attempt, and the command keeps drawing new attempts until `-n` contexts are
written or `--max-attempts` is spent. All requests of a stage go to the backend as one batch.

Modules: `validation` (the rules a context and its updates must meet), `replies` (the reply
schemas and how a reply becomes a record), `prompts`, `pools` (names and settings), `sampler`
(the batched rounds, written as they finish and resumed), `records` (a `contexts` file read for
the story sampler) and `command` (`python -m exploretom contexts`).
"""
