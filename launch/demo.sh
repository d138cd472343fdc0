#!/usr/bin/env bash
# The embedded default, offline on CPU: `make demo` runs this after set-up.
# Arguments go to launch/demo.py (e.g. --bench tomi=../shared/benchmarks/tomi, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${VENV:-.venv}/bin/python" launch/demo.py --out "${OUT_DIR:-runs/demo}" "$@"
