"""ExploreToM: a story language with a belief tracker, questions, and adversarial story search."""
