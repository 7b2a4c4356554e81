# The two newcomer commands (README.md): `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
CORES ?= all
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=

.PHONY: setup run test lint dry-run clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test]'
	touch $@

setup: $(VENV)/.installed

run: setup
	$(VENV)/bin/snakemake --profile config/profiles/local --cores $(CORES) $(SNAKEMAKE_ARGS)

dry-run: setup
	$(VENV)/bin/snakemake --profile config/profiles/local --dry-run $(SNAKEMAKE_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/snakemake --lint

test: setup
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

clean:
	rm -rf results logs .snakemake
