#!/usr/bin/env bash
# The embedded default, offline on CPU. Grows stage by stage (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${VENV:-.venv}/bin/python
OUT=${OUT_DIR:-runs/demo}
mkdir -p "$OUT"
echo "[demo] ExploreToM: sampling and labelling stories -> $OUT/stories.jsonl"
$PY -m exploretom sample --action-set all --asymmetric --people 3 --moves 3 --rooms 2 \
    --max-actions 12 -n 200 --seed 0 --label -o "$OUT/stories.jsonl"
$PY -m exploretom stats "$OUT/stories.jsonl"
