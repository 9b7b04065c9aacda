# Every target creates or reuses .venv itself; `make test` works on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev
export DEBIAN_FRONTEND := noninteractive

.PHONY: test bench serve graphviz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The graphviz *binary* (dot) renders the workflow pictures; pip cannot install it.
graphviz:
	@if ! command -v dot >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing graphviz with apt-get"; \
	    apt-get update -qq && apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "The graphviz binary 'dot' is missing. Install it: 'sudo apt-get install graphviz'," \
	         "'brew install graphviz' or 'conda env create -f environment.yml'."; \
	    exit 1; \
	  fi; \
	fi

test: $(STAMP) graphviz
	$(PY) -m pytest -q

# The v2 API on 127.0.0.1:8787 with the embedded database data/collab.duckdb; the first start
# creates a development workspace and prints its credentials.
serve: $(STAMP)
	$(VENV)/bin/collab serve --db data/collab.duckdb --host 127.0.0.1 --port 8787 --dev

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
