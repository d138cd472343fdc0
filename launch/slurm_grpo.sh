#!/usr/bin/env bash
# Multi-node GRPO under Slurm: one task per node, each running `accelerate launch` (torchrun, the
# DeepSpeed YAMLs' `standard` multi-node launcher) for its GPUs, DeepSpeed ZeRO-3 across all of them.
#
#   sbatch --nodes 4 launch/slurm_grpo.sh configs/grpo/qwen2.5-32b-tomsynth.yaml [--resume] [--key value ...]
#   sbatch --nodes 4 --gpus-per-node 4 launch/slurm_grpo.sh CONFIG      # another GPU count per node
#
# Generation: vLLM as the run config says (colocated in every training process for the paper runs),
# or, with VLLM_SERVER=1, a vLLM server (launch/vllm_server.sh) on the allocation's first node and
# the trainers on the other nodes (`--vllm.mode server`). The trainers then have one node less:
# add a node to keep the paper's batch (the 32B run: --nodes 5, 4 training nodes = 32 processes).
#   VLLM_SERVER=1 sbatch --nodes 5 launch/slurm_grpo.sh configs/grpo/qwen2.5-32b-tomsynth.yaml
#
# Before anything starts, `rl.train --check --num-processes N --num-machines M` builds TRL's real
# GRPOConfig for the process count and prints the batch arithmetic; a batch that does not divide,
# or a paper config that would train on another number of prompts per step, stops the job there.
#
# Environment (all optional):
#   ACCELERATE_CONFIG  accelerate config (default configs/accelerate/deepspeed-zero3.yaml)
#   GPUS_PER_NODE      training processes per node (default: the GPUs Slurm gave each node,
#                      SLURM_GPUS_ON_NODE; more than that is an error)
#   MASTER_PORT        rendezvous port on the first training node (default 29500)
#   VENV               Python environment with the project installed (default .venv)
#   VLLM_SERVER        1: vLLM server on the first node (default 0)
#   VLLM_PORT          the server's port (default 8000)
#   VLLM_ARGS          options for the server (default: --tensor-parallel-size from the config's
#                      vllm.tensor_parallel_size, --data-parallel-size filling the node)
#   VLLM_MODEL         the model the server loads (default: the config's model.path)
#   VLLM_WAIT          seconds to wait for the server to answer /health (default 1800)
# Checkpoints go to the config's train.output_dir (shared storage); resubmitting with --resume
# continues from the last one with the same data order. The job log is slurm-<name>-<id>.out in
# the directory sbatch was run from (a folder that always exists).
#SBATCH --job-name=tomrl-grpo
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --output=slurm-%x-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"

if [ $# -lt 1 ]; then
  echo "usage: sbatch --nodes N launch/slurm_grpo.sh CONFIG.yaml [--resume] [--key value ...]" >&2
  exit 2
fi
if [ -z "${SLURM_JOB_NODELIST:-}" ]; then
  echo "error: not inside a Slurm job; submit with sbatch (or use accelerate launch directly)" >&2
  exit 2
fi

export CONFIG=$1; shift
export ACC=${ACCELERATE_CONFIG:-configs/accelerate/deepspeed-zero3.yaml}
ALLOCATED=${SLURM_GPUS_ON_NODE:-${SLURM_GPUS_PER_NODE:-8}}
ALLOCATED=${ALLOCATED##*:}  # SLURM_GPUS_PER_NODE may read "a100:8"
export GPUS=${GPUS_PER_NODE:-$ALLOCATED}
if [ "$GPUS" -gt "$ALLOCATED" ]; then
  echo "error: GPUS_PER_NODE=$GPUS but Slurm gave each node $ALLOCATED GPU(s); submit with --gpus-per-node $GPUS" >&2
  exit 2
fi
export PORT=${MASTER_PORT:-29500}
export PY=${VENV:-.venv}/bin/python
export ACCELERATE_BIN=${VENV:-.venv}/bin/accelerate
export WANDB_MODE=${WANDB_MODE:-offline}
# NCCL picks the fastest interconnect itself; keep its errors visible in the job log
export NCCL_ASYNC_ERROR_HANDLING=1

mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
GENERATION=()  # (expanded as ${GENERATION[@]+...}: bash < 4.4 calls an empty array unbound under set -u)
if [ "${VLLM_SERVER:-0}" = 1 ]; then
  if [ "${#NODES[@]}" -lt 2 ]; then
    echo "error: VLLM_SERVER=1 needs at least 2 nodes (one for the server, the rest for training)" >&2
    exit 2
  fi
  VLLM_HOST=${NODES[0]}
  VLLM_PORT=${VLLM_PORT:-8000}
  TRAIN_NODES=("${NODES[@]:1}")
  GENERATION=(--vllm.enabled true --vllm.mode server --vllm.server_host "$VLLM_HOST" --vllm.server_port "$VLLM_PORT")
else
  TRAIN_NODES=("${NODES[@]}")
fi
export NNODES=${#TRAIN_NODES[@]}
export HEAD=${TRAIN_NODES[0]}
TRAIN_NODELIST=$(IFS=,; echo "${TRAIN_NODES[*]}")

echo "[slurm_grpo] $NNODES training node(s) x $GPUS GPU(s), head $HEAD:$PORT, $ACC, $CONFIG $*"
# The real TRL config for this process count, checked before any GPU is busy.
"$PY" -m rl.train "$CONFIG" "$@" ${GENERATION[@]+"${GENERATION[@]}"} --check \
  --num-processes $((NNODES * GPUS)) --num-machines "$NNODES"

SERVER_PID=
if [ "${VLLM_SERVER:-0}" = 1 ]; then
  # the model and tensor-parallel size the run config (with its overrides) names
  read -r MODEL TP < <("$PY" -c 'import sys
from rl.config import GRPORun, load_config
c = load_config(sys.argv[1], GRPORun, [a for a in sys.argv[2:] if a != "--resume"])
print(c.model.path, c.vllm.tensor_parallel_size)' "$CONFIG" "$@")
  MODEL=${VLLM_MODEL:-$MODEL}
  if [ -z "${VLLM_ARGS:-}" ] && [ $((ALLOCATED % TP)) -ne 0 ]; then
    echo "error: vllm.tensor_parallel_size $TP does not divide the $ALLOCATED GPU(s) of the server node; set VLLM_ARGS" >&2
    exit 2
  fi
  VLLM_ARGS=${VLLM_ARGS:-"--tensor-parallel-size $TP --data-parallel-size $((ALLOCATED / TP))"}
  echo "[slurm_grpo] vLLM server on $VLLM_HOST:$VLLM_PORT: $MODEL $VLLM_ARGS"
  # shellcheck disable=SC2086  # VLLM_ARGS is a list of options
  srun --nodes=1 --ntasks=1 --nodelist="$VLLM_HOST" --kill-on-bad-exit=1 \
    launch/vllm_server.sh "$MODEL" --host 0.0.0.0 --port "$VLLM_PORT" $VLLM_ARGS &
  SERVER_PID=$!
  trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true' EXIT
  waited=0
  until curl -sf "http://$VLLM_HOST:$VLLM_PORT/health" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "error: the vLLM server on $VLLM_HOST exited before answering; see its lines above" >&2
      exit 1
    fi
    if [ "$waited" -ge "${VLLM_WAIT:-1800}" ]; then
      echo "error: the vLLM server on $VLLM_HOST:$VLLM_PORT did not answer /health in ${VLLM_WAIT:-1800} s" >&2
      exit 1
    fi
    sleep 10; waited=$((waited + 10))
  done
  echo "[slurm_grpo] vLLM server up after ${waited} s"
fi

# SLURM_PROCID (the task's rank in this step, one task per node) is read inside the per-node
# shell. --deepspeed_multinode_launcher standard also covers an ACCELERATE_CONFIG without it.
srun --nodes="$NNODES" --ntasks="$NNODES" --ntasks-per-node=1 --nodelist="$TRAIN_NODELIST" \
  --kill-on-bad-exit=1 bash -c '
  exec "$ACCELERATE_BIN" launch --config_file "$ACC" --deepspeed_multinode_launcher standard \
    --num_machines "$NNODES" --num_processes $((NNODES * GPUS)) \
    --machine_rank "$SLURM_PROCID" --main_process_ip "$HEAD" --main_process_port "$PORT" \
    -m rl.train "$CONFIG" "$@"' _ "$@" ${GENERATION[@]+"${GENERATION[@]}"}
