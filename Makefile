# Two commands for a fresh machine: `make demo` (the reproduction report) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean tables

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/expressivity reproduce --quick --out report

test: $(STAMP)
	$(BIN)/python -m pytest -q

# After `make demo`: keep its claims.json as the run the docs show, and regenerate their tables.
tables: $(STAMP)
	cp report/claims.json docs/claims.json
	$(BIN)/expressivity claims-table docs/claims.json README.md docs/report.md

bench: $(STAMP)
	$(BIN)/python bench/compile_bench.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

clean:
	rm -rf $(VENV) report runs
