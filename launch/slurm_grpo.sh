#!/usr/bin/env bash
# Multi-node GRPO under Slurm: one task per node, each running `accelerate launch` for its GPUs,
# DeepSpeed ZeRO-3 across all of them, vLLM colocated for generation (as the run config says).
#
#   sbatch --nodes 4 launch/slurm_grpo.sh configs/grpo/qwen2.5-32b-tomsynth.yaml [--resume] [--key value ...]
#
# Environment (all optional):
#   ACCELERATE_CONFIG  accelerate config (default configs/accelerate/deepspeed-zero3.yaml)
#   GPUS_PER_NODE      processes per node (default 8)
#   MASTER_PORT        rendezvous port on the first node (default 29500)
#   VENV               Python environment with the project installed (default .venv)
# Checkpoints go to the config's train.output_dir (shared storage); resubmitting with --resume
# continues from the last one with the same data order.
#SBATCH --job-name=tomrl-grpo
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --output=runs/slurm/%x-%j.out
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
export GPUS=${GPUS_PER_NODE:-8}
export NNODES=${SLURM_NNODES:-1}
export HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export PORT=${MASTER_PORT:-29500}
export ACCELERATE_BIN=${VENV:-.venv}/bin/accelerate
export WANDB_MODE=${WANDB_MODE:-offline}
# NCCL picks the fastest interconnect itself; keep its errors visible in the job log
export NCCL_ASYNC_ERROR_HANDLING=1
mkdir -p runs/slurm

echo "[slurm_grpo] $NNODES node(s) x $GPUS GPU(s), head $HEAD:$PORT, $ACC, $CONFIG $*"
# SLURM_NODEID is set per task by srun, so it is read inside the per-node shell
srun --kill-on-bad-exit=1 bash -c '
  exec "$ACCELERATE_BIN" launch --config_file "$ACC" \
    --num_machines "$NNODES" --num_processes $((NNODES * GPUS)) \
    --machine_rank "$SLURM_NODEID" --main_process_ip "$HEAD" --main_process_port "$PORT" \
    -m rl.train "$CONFIG" "$@"' _ "$@"
