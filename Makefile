# Every target that needs the environment depends on $(STAMP), so a fresh clone
# can run `make serve` or `make test` directly: the first call sets things up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NODE   := node_modules/.installed
PORT   ?= 8000
# The tests run on one worker per core (pytest-xdist, `-n`); the tests that
# share a costly fixture run on one worker (`worker_group` in tests/conftest.py,
# `--dist loadgroup` in pyproject.toml). JOBS=0: no workers, one process.
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

.DEFAULT_GOAL := help
.PHONY: help install serve docs test test-fast lint bench train sample translations clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-13s %s\n", $$1, $$2}'

install: $(STAMP) ## create .venv; install the pinned dependencies, the renderer and the tutorial

# Both distributions, editable: the renderer (literate-pages, literate/pyproject.toml)
# and the tutorial (pyproject.toml). No npm: KaTeX ships inside the renderer.
$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml literate/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-nodeps.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e ./literate -e .
	@touch $@

# The tests' node packages: axe-core (accessibility checks in the browser tests)
# and KaTeX for node, the reference bench/katex.py measures against.
$(NODE): package-lock.json
	npm ci --no-audit --no-fund --silent
	@touch $@

serve: $(STAMP) ## build the site and serve it at http://127.0.0.1:$(PORT), reloading on edits
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(PORT) --livereload

docs: $(STAMP) ## build the site into site/ (strict: any warning fails the build)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: $(STAMP) $(NODE) ## run the test suite (numerics, renderer, translations, site in a browser)
	$(BIN)/python -m pytest -n $(JOBS)

test-fast: $(STAMP) $(NODE) ## all but the browser, site-build and training tests (under a minute)
	$(BIN)/python -m pytest -n $(JOBS) -q -m "not slow and not browser" --ignore=tests/test_train.py

lint: $(STAMP) ## ruff: style and line length (88)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP) $(NODE) ## run the benchmarks; each prints a table of ratios to a reference
	$(BIN)/python bench/mha_speed.py
	$(BIN)/python bench/train_speed.py
	$(BIN)/python bench/site.py
	$(BIN)/python bench/repeats.py
	$(BIN)/python bench/web_model.py
	$(BIN)/python bench/katex.py

translations: $(STAMP) ## check the Japanese and Chinese tables (the translators' CI gate)
	$(BIN)/python -m literate translations check

train: $(STAMP) ## train the default (cpu) preset on Shakespeare
	$(BIN)/python train.py

sample: $(STAMP) ## sample from the last checkpoint
	$(BIN)/python train.py sample

clean: ## remove the environment, the built site and caches
	rm -rf $(VENV) node_modules site .cache test-artifacts .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
