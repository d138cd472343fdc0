"""The backends, one module each, named as `--backend` names them: hf, vllm, openai, anthropic,
served.

Each module defines `BACKEND`, its `Backend` class. `eval.backends` finds them by their files
(adding a backend is adding its module here and its test) and imports one only when it is asked
for, so a backend's heavy library (torch, vllm) is never loaded for the others.
"""
