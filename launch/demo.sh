#!/usr/bin/env bash
# The quick demo (SmolLM2-135M-Instruct, SFT on our data), offline on CPU: `make demo` runs
# this after set-up.
# Arguments go to launch/demo.py (e.g. --seed 1, --profile tiny, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${VENV:-.venv}/bin/python" launch/demo.py ${OUT_DIR:+--out "$OUT_DIR"} "$@"
