# The two newcomer commands (README.md): `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV ?= .venv
CORES ?= all
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=

.PHONY: setup run test test-fast test-properties lint dry-run clean clean-partial

$(VENV)/.installed: pyproject.toml
	@# WordNet's database for the wordnet stemmer: Debian's wordnet-base, where apt-get can run as root
	@if [ ! -f /usr/share/wordnet/index.noun ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get install -y -qq wordnet-base || (apt-get update -qq && apt-get install -y -qq wordnet-base)) >/dev/null \
		|| echo "warning: wordnet-base not installed: the wordnet stemmer will ask for it"; fi
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test,slurm]'
	touch $@

setup: $(VENV)/.installed
	@# the ahead-of-time kernels of a fresh retrieval process (irgrid.aot), built again when stale; a failed
	@# build (no C compiler, a numba without pycc) says so in one line and leaves numba's JIT kernels in use
	@$(VENV)/bin/irgrid aot build || true

run: setup
	@# a lock left by a killed run is removed; a run still active here stops this one (exit 2, its pid named)
	$(VENV)/bin/irgrid check-lock
	$(VENV)/bin/snakemake --profile config/profiles/local --cores $(CORES) $(SNAKEMAKE_ARGS)

dry-run: setup
	@# a lock left by a killed run is removed; a run still active here stops this one (exit 2, its pid named)
	$(VENV)/bin/irgrid check-lock
	$(VENV)/bin/snakemake --profile config/profiles/local --dry-run $(SNAKEMAKE_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/snakemake --lint

test: setup
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# While editing, on 2 workers: the unit tests, without those marked slow (Snakemake runs, whole
# collections, worker pools) and without the property tests (Hypothesis marks them `hypothesis`).
test-fast: setup
	$(VENV)/bin/python -m pytest -n 2 -m "not slow and not hypothesis" -q $(PYTEST_ARGS)

# The property tests not marked slow, with fewer examples each (the `fast` profile, tests/conftest.py).
test-properties: setup
	$(VENV)/bin/python -m pytest -n 2 -m "hypothesis and not slow" -q --hypothesis-profile fast $(PYTEST_ARGS)

clean:
	rm -rf results logs .snakemake

# Temporaries of killed jobs (.name.host~pid~token.tmp) whose process no longer runs on this host.
clean-partial: setup
	$(VENV)/bin/irgrid clean-leftovers results
