"""`python -m exploretom report`: the paper's tables and figure from adversarial-search runs.

Input: search-run JSONL files (one labelled story per line plus `method`, `setting`, `target`,
`evaluations`, `found`, `accuracy`, and `correct` on every question). Output in DIR:
- `report.md`: counts per method and target; table 1 (accuracy per action set, columns target
  x asymmetry); table 6 (accuracy on interesting vs not interesting questions, % interesting);
  A* vs baseline per setting (figure 6's numbers, mean story length per method);
- `table1_accuracy.png` (table 1 as bars), `fig6_astar_vs_baseline.png` (histogram of per-setting
  accuracy differences, when both methods are present);
- `report.json`: every number of the report.

Accuracy is pooled over questions (correct / asked) of the chosen orders: first-order belief
questions by default, as in the paper's tables 1 and

One module per job: `runs` reads the search-run records, `aggregate` computes every number,
`markdown` writes report.md, `plots` draws the figures, and `command` is the `report` command
that runs them in turn.
"""
