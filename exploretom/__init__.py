"""ExploreToM: a story language with a belief tracker, questions, and adversarial story search.

Folders by what they hold, each importing only those listed before it (docs/DESIGN.md draws
them; tests/test_imports.py checks it): `semantics/` (the story language, the tracker, questions,
reasoning traces and their checker), `sampling/` (action sets, the lexicon, the sampler),
`llm/` (what the LLM commands share), `search/` (the A* search, its targets, `search` and
`bench-search`), `datasets/` (`export`, `stats`), `report/`, `contexts/` and `infill/` (the LLM
commands). At the top: `cli.py` (`python -m exploretom`), `cli_args.py` (the commands' argument
helpers) and the entry points run by name (`bench`, `bench_target`, `search_floor`).
"""
