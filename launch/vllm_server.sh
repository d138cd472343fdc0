#!/usr/bin/env bash
# A vLLM generation server for GRPO's server mode (vllm.mode: server), via `trl vllm-serve`.
# The server owns its GPUs; training runs on the others and sends it prompts, then pushes the
# updated weights to it after each step.
#
#   CUDA_VISIBLE_DEVICES=6,7 launch/vllm_server.sh Qwen/Qwen2.5-7B-Instruct --tensor_parallel_size 2
#   CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 accelerate launch --config_file configs/accelerate/deepspeed-zero3.yaml \
#     --num_processes 6 -m rl.train configs/grpo/qwen2.5-7b-tomsynth.yaml \
#     --vllm.mode server --vllm.server_host HOST_OF_THE_SERVER
#
# Any other `trl vllm-serve` option may follow the model (--port, --gpu_memory_utilization,
# --max_model_len, --data_parallel_size, ...). vLLM is a GPU-only optional extra with its own
# torch/transformers pins: install it in its own environment and point VENV at it.
#   VENV  environment that has trl and vllm (default .venv)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: launch/vllm_server.sh MODEL [trl vllm-serve options]" >&2
  exit 2
fi
PY=${VENV:-.venv}/bin/python
if ! "$PY" -c "import vllm" >/dev/null 2>&1; then
  echo "error: vLLM is not installed in ${VENV:-.venv}; on a GPU machine: pip install -e '.[vllm]' in its own environment (docs/training.md)" >&2
  exit 2
fi
MODEL=$1; shift
# the same generation length limit as the paper runs (1,280 prompt + 768 completion tokens)
exec "${VENV:-.venv}/bin/trl" vllm-serve --model "$MODEL" --max_model_len 2048 "$@"
