"""Adversarial story search (paper 2.2.3): the A* search and the overgenerate-and-filter baseline
(`astar`), the targets that answer the questions it scores (`targets`: a model through eval's
backends, or a scripted reasoner of `reasoners`), the `search` command with its run config and
records (`run`), and `bench-search`, A* against the baselines at equal budget (`bench`). Imports
`exploretom.semantics` and `exploretom.sampling`."""
