# make run   : install into .venv and open the web UI on the default humanoid scene
# make test  : install into .venv (with the test tools) and run lint, format check and every test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test install lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[web,notebook,scale,fast,test]"

tests/js/node_modules: tests/js/package.json
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	touch tests/js/node_modules

run: install
	$(BIN)/fabrik3d serve --preset humanoid

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The library's tests run on every core (pytest-xdist); the web UI's, each a real server driven by
# a real Chromium, one at a time after them. Both always run; either failing fails the target.
test: install tests/js/node_modules lint
	status=0; \
	$(BIN)/python -m pytest -q -n auto --ignore=tests/web || status=1; \
	$(BIN)/python -m pytest -q tests/web || status=1; \
	exit $$status

bench: install
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) tests/js/node_modules build *.egg-info
