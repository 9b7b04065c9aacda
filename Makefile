# Every target creates or reuses .venv itself; `make test` works on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev
export DEBIAN_FRONTEND := noninteractive

.PHONY: test bench graphviz clean

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

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
