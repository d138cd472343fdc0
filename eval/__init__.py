"""Evaluation: model backends, the shared answer parser, benchmark suites and reports.

`eval` imports none of the other packages; they import it (see DESIGN.md).
"""
