#!/usr/bin/env bash
# Create the project's virtual environment (idempotent). torch is pinned to the CPU build
# that this machine kind carries: an unpinned torch would pull the CUDA stack (GBs).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
SECONDS=0
pip_install() {
  # One line per package pip collects, with the elapsed time, so a first set-up (about three
  # minutes) shows progress. pip warns about every missing local index location: harmless noise.
  "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off -c constraints.txt "$@" \
    2> >(grep -v "is ignored" >&2) |
    while IFS= read -r line; do
      case "$line" in
        Collecting*) printf '[setup] %4ds %s\n' "$SECONDS" "${line:0:100}" ;;
        Processing*) printf '[setup] %4ds collecting %s\n' "$SECONDS" "${line##*/}" ;;
        "Installing collected packages"*) printf '[setup] %4ds installing %s packages ...\n' "$SECONDS" \
          "$(tr ',' '\n' <<<"${line#*: }" | wc -l)" ;;
        "Successfully installed"*) printf '[setup] %4ds installed\n' "$SECONDS" ;;
      esac
    done
}
echo "[setup] torch (CPU build) ..."
pip_install torch==2.13.0
echo "[setup] project with extras train,test,deepspeed ..."
pip_install -e ".[train,test,deepspeed]"
"$VENV/bin/python" -c "import exploretom, eval, tomsynth, rl"
echo "[setup] done in ${SECONDS}s: $VENV"
