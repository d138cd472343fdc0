#!/usr/bin/env bash
# Create the project's virtual environment (idempotent). torch is pinned to the CPU build
# that this machine kind carries: an unpinned torch would pull the CUDA stack (GBs).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip_install() {
  # pip warns about every missing local index location; the warnings are harmless noise.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -c constraints.txt "$@" 2> >(grep -v "is ignored" >&2)
}
echo "[setup] torch (CPU build) ..."
pip_install torch==2.13.0
echo "[setup] project with extras train,test,deepspeed ..."
pip_install -e ".[train,test,deepspeed]"
"$VENV/bin/python" -c "import exploretom, eval, tomsynth, rl"
echo "[setup] done: $VENV"
