"""Labelled stories made into datasets: the `export` command (labelled stories -> a Hugging Face
`DatasetDict` of contract rows) with its steps, reading the stories (`stories`), splits and the
selection of questions (`split`) with their seeded draws (`draws`), `--stated-placements`
(`wording`), the rows (`rows`), `--balance-shortcuts` (`shortcuts`) and the dataset card
(`card`); and the counts of the `stats` command (`stats`). Imports `exploretom.semantics`,
`exploretom.sampling` and the argument helpers of `exploretom.cli_args`.

(Inside this package `import datasets` is still Hugging Face's library: imports are absolute.)"""
