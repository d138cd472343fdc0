"""launch/slurm_grpo.sh on one host: Slurm's srun/scontrol are stand-ins that start one task per
"node" on 127.0.0.1, so the script's own accelerate command, YAML and flags run for real.

The two-machine test is the multi-node path of a cluster: two `accelerate launch` processes (one per
machine rank, DeepSpeed ZeRO-2 over gloo, the YAML's `standard` multi-node launcher) must join one
world of 2 and train a step. Without the standard launcher accelerate falls back to pdsh, trains on
one machine only and writes the whole environment to ./.deepspeed_env.
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rl.tiny_model import build_tiny_model, read_corpus

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "launch/slurm_grpo.sh"
GRPO_TINY = REPO / "configs/grpo/tiny-cpu.yaml"

# srun: runs its command once per task (SLURM_PROCID 0..n-1) and waits for all, as Slurm does one
# task per node; FAKE_SRUN_RECORD=1 only records the command (the vLLM server step then sleeps).
FAKE_SRUN = r"""#!/usr/bin/env bash
n=1
while [ $# -gt 0 ]; do
  case $1 in
    --ntasks=*) n=${1#*=}; shift;;
    --nodelist=*) echo "nodelist ${1#*=}" >> "$FAKE_LOG"; shift;;
    --*) shift;;
    *) break;;
  esac
done
echo "srun x$n: $*" >> "$FAKE_LOG"
if [ "${FAKE_SRUN_RECORD:-0}" = 1 ]; then
  case "$*" in *vllm_server.sh*) exec sleep 60;; esac
  for ((i = 0; i < n; i++)); do SLURM_PROCID=$i "$@"; done
  exit 0
fi
pids=()
for ((i = 0; i < n; i++)); do SLURM_PROCID=$i SLURM_NODEID=$i "$@" & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
"""
FAKE_SCONTROL = """#!/usr/bin/env bash
printf '%s\\n' $FAKE_HOSTS
"""
FAKE_CURL = "#!/usr/bin/env bash\nexit 0\n"
# an accelerate that records its arguments (the server-mode test does not train)
FAKE_ACCELERATE = """#!/usr/bin/env bash
echo "accelerate rank=$SLURM_PROCID $*" >> "$FAKE_LOG"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture(scope="module")
def fake_slurm(tmp_path_factory):
    bin_dir = tmp_path_factory.mktemp("fake-slurm-bin")
    write_exe(bin_dir / "srun", FAKE_SRUN)
    write_exe(bin_dir / "scontrol", FAKE_SCONTROL)
    write_exe(bin_dir / "curl", FAKE_CURL)
    return bin_dir


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, toy_data):
    root = tmp_path_factory.mktemp("launch")
    texts = list(read_corpus([toy_data["location"]]))
    return build_tiny_model(texts, root / "tiny", hidden_size=64, num_layers=1, num_heads=2, num_kv_heads=1,
                            intermediate_size=128)


def run_script(args, fake_slurm, log: Path, hosts: str, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PATH": f"{fake_slurm}:{os.environ['PATH']}", "FAKE_LOG": str(log),
                "FAKE_HOSTS": hosts, "SLURM_JOB_NODELIST": "node[0-9]", "SLURM_SUBMIT_DIR": str(REPO),
                "SLURM_GPUS_ON_NODE": "1", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled",
                "VENV": str(Path(sys.executable).parent.parent), "MASTER_PORT": str(free_port()), **env}
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, env=full_env, capture_output=True,
                          text=True, timeout=500)


def tiny_args(tiny: Path, toy_data, out: Path, *extra: str) -> list[str]:
    return [str(GRPO_TINY), "--model.path", str(tiny), "--train.output_dir", str(out),
            "--data.train", json.dumps([{"path": str(toy_data["location"])}]),
            "--max_steps", "1", "--save_steps", "10", "--logging_steps", "1",
            "--max_completion_length", "8", "--per_device_train_batch_size", "8", *extra]


def test_deepspeed_yamls_use_the_standard_multinode_launcher():
    for p in (REPO / "configs/accelerate").glob("deepspeed-*.yaml"):
        assert yaml.safe_load(p.read_text())["deepspeed_config"]["deepspeed_multinode_launcher"] == "standard"
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert ".deepspeed_env" in ignored and "slurm-*.out" in ignored
    header = [line for line in SCRIPT.read_text().splitlines() if line.startswith("#SBATCH")]
    # the job log goes to the submit directory, which exists (Slurm does not create folders)
    assert "#SBATCH --output=slurm-%x-%j.out" in header


@pytest.mark.slow
def test_two_machines_join_one_world_and_train_a_step(fake_slurm, tiny, toy_data, tmp_path):
    """Two machine ranks on 127.0.0.1 through launch/slurm_grpo.sh with DeepSpeed ZeRO-2 on CPU."""
    out, log = tmp_path / "run", tmp_path / "fake.log"
    env_file = REPO / ".deepspeed_env"
    before = env_file.stat().st_mtime if env_file.exists() else None
    proc = run_script(tiny_args(tiny, toy_data, out), fake_slurm, log, "127.0.0.1 127.0.0.1",
                      ACCELERATE_CONFIG="configs/accelerate/deepspeed-zero2.yaml", SLURM_NNODES="2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    err = proc.stderr
    assert "processes: 2 on 2 machine(s) (1 per machine)" in err  # the preflight --check
    assert "[rl.train] 2 process(es), distributed type DEEPSPEED" in err  # one world of 2
    assert "srun x2: bash -c" in log.read_text()
    steps = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in steps if "loss" in r] == [1]
    assert (out / "model.safetensors").is_file()
    # the standard launcher writes no environment file (pdsh would, secrets included)
    assert (env_file.stat().st_mtime if env_file.exists() else None) == before


@pytest.mark.slow  # the preflight check imports TRL: ~25 s on 2 loaded cores
def test_server_mode_puts_vllm_on_the_first_node_and_trainers_on_the_rest(fake_slurm, tiny, toy_data, tmp_path):
    """VLLM_SERVER=1 on three nodes: the server on node0, two training machines on node1-2, each told
    where the server is; the preflight check runs for the trainers' process count."""
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    write_exe(venv / "python", f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    write_exe(venv / "accelerate", FAKE_ACCELERATE)
    log = tmp_path / "fake.log"
    proc = run_script(tiny_args(tiny, toy_data, tmp_path / "run"), fake_slurm, log, "node0 node1 node2",
                      VENV=str(venv.parent), VLLM_SERVER="1", FAKE_SRUN_RECORD="1", SLURM_GPUS_ON_NODE="2",
                      VLLM_ARGS="--tensor-parallel-size 2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "processes: 4 on 2 machine(s) (2 per machine)" in proc.stderr
    assert "warning: vllm.enabled but vLLM is not installed here" in proc.stderr
    lines = log.read_text().splitlines()
    assert "nodelist node0" in lines and "nodelist node1,node2" in lines
    server = next(line for line in lines if "vllm_server.sh" in line)
    assert server.endswith(f"launch/vllm_server.sh {tiny} --host 0.0.0.0 --port 8000 --tensor-parallel-size 2")
    ranks = [line for line in lines if line.startswith("accelerate rank=")]
    assert len(ranks) == 2 and all("--num_machines 2 --num_processes 4" in r for r in ranks)
    assert all("--main_process_ip node1" in r and "--deepspeed_multinode_launcher standard" in r for r in ranks)
    assert all(r.endswith("--vllm.enabled true --vllm.mode server --vllm.server_host node0 "
                          "--vllm.server_port 8000") for r in ranks)
    assert {r.split()[1] for r in ranks} == {"rank=0", "rank=1"}
    assert not (tmp_path / "run").exists()  # the check writes nothing


def test_script_refuses_more_processes_than_allocated_gpus(fake_slurm, tmp_path):
    proc = run_script([str(GRPO_TINY)], fake_slurm, tmp_path / "log", "n0", GPUS_PER_NODE="8",
                      SLURM_GPUS_ON_NODE="4")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: GPUS_PER_NODE=8 but Slurm gave each node 4 GPU(s); "
                                   "submit with --gpus-per-node 8")
    proc = run_script([str(GRPO_TINY)], fake_slurm, tmp_path / "log", "n0", VLLM_SERVER="1")
    assert proc.returncode == 2 and "VLLM_SERVER=1 needs at least 2 nodes" in proc.stderr
