# Each target creates .venv when missing. Only python3 is needed on the machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint bench accuracy bands screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	# CPU build of torch first: the [bench] extra would otherwise pull a multi-GB CUDA build.
	$(BIN)/pip install -q "torch==2.13.0" || echo "torch not installed: bench tests will skip" >&2
	$(BIN)/pip install -q -e ".[dev]"
	# Byte-compile the package once: where PYTHONDONTWRITEBYTECODE is set, every run would compile it again
	# (~0.2 s of each CLI start); a stale .pyc is ignored by Python, so an edit never runs old code.
	$(BIN)/python -m compileall -q src > /dev/null
	touch $(STAMP)

demo: $(STAMP)
	@bash scripts/demo.sh

test: lint
	$(BIN)/python -m pytest -q -n 2 tests

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy src

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

accuracy: $(STAMP)
	$(BIN)/python -m infrafit.perf.validate.accuracy_report

bands: $(STAMP)
	$(BIN)/python scripts/fit_bands.py

screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache
