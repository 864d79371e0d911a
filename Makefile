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

.PHONY: setup setup-dev demo test bench lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUNTIME): pyproject.toml | $(BIN)/python
ifeq ($(TORCH),cuda)
	$(BIN)/pip install -q "torch>=2.2"
else
	$(BIN)/pip install -q "torch==2.13.0" || $(BIN)/pip install -q "torch>=2.2" --index-url https://download.pytorch.org/whl/cpu
endif
	$(BIN)/pip install -q -e ".[hf,hub]"
	touch $(RUNTIME)

$(DEV): $(RUNTIME)
	$(BIN)/pip install -q -e ".[dev]"
	touch $(DEV)

setup: $(RUNTIME)

setup-dev: $(DEV)

demo: setup
	$(BIN)/python examples/demo.py

test: setup-dev
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -p no:cacheprovider  # tiny models: 1 thread is fastest

bench: setup-dev
	bench/run

lint: setup-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) out
