# Every target creates or reuses .venv itself; `make test` works on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev
export DEBIAN_FRONTEND := noninteractive
# Python's default, even where the environment turns it off: the tests start about a hundred
# Python processes (servers, commands, pytest's workers), and without bytecode caches each one
# compiles every module of ours it imports again (0.55 s of CPU for a server's).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: test lint bench soak serve run lab compiled graphviz chromium postgresql dist clean

# The editable install compiles the engine and the simulator's inner loop with mypyc (setup.py),
# next to their sources; setuptools 77 reads pyproject.toml's license fields for the rebuilds.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 'setuptools>=77'
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(COMPILED)

# A compiled module is imported in place of its source, so an edited source is rebuilt before
# anything runs (about 30 s). COLLAB_COMPILE=0 removes the compiled modules: pure Python, for
# working on those modules without rebuilding (the behaviour is the same; the tests check it).
COMPILED := $(VENV)/.compiled
BUILT    := collab_compiled__mypyc.*.so toolkit/*/*.cpython-*.so
compiled: $(STAMP)
	@if [ "$$COLLAB_COMPILE" = "0" ]; then \
	  rm -f $(BUILT) $(COMPILED); \
	else \
	  $(MAKE) --no-print-directory $(COMPILED); \
	fi

$(COMPILED): setup.py $(wildcard toolkit/engine/*.py toolkit/simulate/*.py)
	@echo "compiling the engine and the simulator's inner loop (mypyc)"
	@$(PY) setup.py --quiet build_ext --inplace >$(VENV)/compile.log 2>&1 || { cat $(VENV)/compile.log; exit 1; }
	@# mypyc rewrites a C file only when it changed, and setuptools relinks only then: a module
	@# whose edit changed no code (a comment) keeps its build, which is as new as its source.
	@touch $(BUILT) $(COMPILED)

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

# Chromium runs the browser test (tests/e2e: JupyterLab driven by Playwright). Like graphviz it
# comes from the system: apt-get installs Debian's package when we are root. Otherwise the browser
# test fails and says why; COLLAB_SKIP_BROWSER=1 skips it (for machines without a browser).
chromium:
	@if [ "$$COLLAB_SKIP_BROWSER" = "1" ]; then \
	  echo "COLLAB_SKIP_BROWSER=1: the browser test will be skipped"; \
	elif ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium with apt-get (for the browser test)"; \
	    apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "Chromium is missing and cannot be installed here (not root, or no apt-get): the browser" \
	         "test will fail. Install it ('sudo apt-get install chromium') or set COLLAB_SKIP_BROWSER=1."; \
	  fi; \
	fi

# PostgreSQL (Debian's package) is the second store backend; the tests start a throw-away server
# of their own in a temporary directory (tests/postgres.py), so only the programs are needed.
# COLLAB_SKIP_POSTGRES=1 skips the PostgreSQL tests on a machine without it.
postgresql:
	@if [ "$$COLLAB_SKIP_POSTGRES" = "1" ]; then \
	  echo "COLLAB_SKIP_POSTGRES=1: the PostgreSQL tests will be skipped"; \
	elif ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing postgresql with apt-get (the second store backend's tests)"; \
	    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; \
	  else \
	    echo "PostgreSQL is missing and cannot be installed here (not root, or no apt-get): its tests" \
	         "will fail. Install it ('sudo apt-get install postgresql') or set COLLAB_SKIP_POSTGRES=1."; \
	  fi; \
	fi

# The house rules first (make lint), then unit, property, API and browser tests, then the
# notebooks top to bottom (nbval; see pyproject.toml) — the HTTP tests on a DuckDB file, the
# PostgreSQL ones (several processes, outages, the fault harness) on a cluster the tests start.
# That main run uses two pytest workers: it keeps each test file in one worker, so its module's
# server and fixtures are made once, and hands out the files in the order collected, which puts
# the long-running ones first (see tests/conftest.py); most tests wait on a server, a browser or
# a kernel, so two at once nearly halve the time. Beside it, in one pytest process of its own,
# the HTTP API tests run again on PostgreSQL with two server processes, each request sent to the
# next process in turn (tests that choose their database themselves run in the main run only);
# its output follows the main run's. Together they keep two cores busy where one after the other
# left a tenth of the time idle. Each ends with its slowest tests (--durations), where the
# 15-minute budget of `make test` is watched.
test: compiled graphviz chromium postgresql lint
	@pg_log=$$(mktemp); pg_pid=; \
	if [ "$$COLLAB_SKIP_POSTGRES" = "1" ]; then \
	  echo "COLLAB_SKIP_POSTGRES=1: the HTTP API tests on PostgreSQL are skipped"; \
	else \
	  echo "The HTTP API tests on PostgreSQL run beside the main run; their output follows it."; \
	  COLLAB_TEST_BACKEND=postgres2 $(PY) -m pytest -q -m "not own_database" --durations=8 tests/api \
	    >$$pg_log 2>&1 & pg_pid=$$!; \
	fi; \
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=12; main=$$?; \
	postgres=0; \
	if [ -n "$$pg_pid" ]; then \
	  wait $$pg_pid; postgres=$$?; \
	  echo; echo "== The HTTP API tests on PostgreSQL with two server processes (COLLAB_TEST_BACKEND=postgres2):"; \
	  cat $$pg_log; \
	fi; \
	rm -f $$pg_log; \
	[ $$main = 0 ] && [ $$postgres = 0 ]

# ruff's lint rules and its format check, then mypy: toolkit/engine and toolkit/store strictly,
# the rest of toolkit and server at mypy's default strictness (all configured in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# JupyterLab on notebooks/, on 127.0.0.1 only; the URL with its token is printed as it starts.
run: compiled graphviz
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
	    $$([ "$$(id -u)" = "0" ] && echo --ServerApp.allow_root=True)

lab: run

# The v2 API on 127.0.0.1:8787 with the embedded database data/collab.duckdb; the first start
# creates a development workspace and prints its credentials.
serve: compiled
	$(VENV)/bin/collab serve --db data/collab.duckdb --host 127.0.0.1 --port 8787 --dev

bench: compiled
	$(PY) -m pip install --quiet -e '.[bench]'
	for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The fault harness (tests/faults) for SOAK_SECONDS (default 600): a mixed load on a real server,
# SIGKILL at random moments, a restart and checks after each; prints requests sent, acknowledged,
# kills survived, lost and duplicated, and fails if anything was lost, duplicated or a check failed.
# SOAK_SEED replays a seed. Not part of `make test` (which runs a short version of it).
# SOAK_BACKEND=postgres SOAK_PROCESSES=2: two server processes on a PostgreSQL database the soak
# starts itself, the load through both, each kill taking one of them while the other serves.
SOAK_SECONDS ?= 600
SOAK_BACKEND ?= duckdb
SOAK_PROCESSES ?= 1
soak: compiled postgresql
	$(PY) tests/faults/soak.py --seconds $(SOAK_SECONDS) --backend $(SOAK_BACKEND) --processes $(SOAK_PROCESSES)

# The sdist and the wheel in dist/ (`python -m build`: the wheel is built from the sdist, in an
# isolated environment, as pip would build it). tests/package installs such a wheel and runs it.
# Leftovers go first: setuptools adds the files an old *.egg-info lists to the sdist.
dist: $(STAMP)
	rm -rf dist build *.egg-info
	$(PY) -m build --outdir dist .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist *.egg-info $(BUILT)
