# Two commands do all set-up on a fresh machine (2 CPU cores, no GPU, package registries only):
#   make demo   builds .venv and runs the embedded-default pipeline
#   make test   builds .venv and runs the test suite (what .ci/run calls)
VENV  ?= .venv
PY    := $(VENV)/bin/python
# Re-run set-up whenever the dependency declarations change.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt launch/setup.sh
	VENV=$(VENV) bash launch/setup.sh
	@rm -f $(VENV)/.installed-*; touch $@

demo: setup
	VENV=$(VENV) bash launch/demo.sh

test: setup
	OMP_NUM_THREADS=1 WANDB_MODE=disabled HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
	  $(PY) -m pytest -n 2 --timeout 900 -q $(PYTEST_ARGS)

bench: setup
	$(PY) -m exploretom.bench

clean:
	rm -rf $(VENV) runs .pytest_cache .hypothesis
