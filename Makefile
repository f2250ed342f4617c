# The two entry points (see README): `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
INVENTORY ?= inventory/lab.yaml

.PHONY: setup demo demo-down test lint docs unit bench clean ansible-versions

setup:
	@scripts/setup.sh

## demo: build the virtual lab for $(INVENTORY), deploy the RA onto it, print a summary
demo: setup
	$(BIN)/racfg demo $(INVENTORY)

demo-down: setup
	$(BIN)/racfg lab down $(INVENTORY)

## test: linters, unit tests and lab integration tests (needs root for the lab). Two workers, each
## test module on one of them (tests/conftest.py); then the tests that measure rates, alone; then the
## unit suite and a deploy/validate round on the oldest and the newest ansible-core (ansible-versions).
test: setup lint docs
	$(BIN)/pytest -q --durations=30 -n 2 -m "not solo and not versions" tests
	$(BIN)/pytest -q --durations=10 -m solo tests
	scripts/ansible-versions.sh

## ansible-versions: ansible-core 2.16 (Python 3.11) and 2.21 (Python 3.13), each in a venv of its own
ansible-versions:
	scripts/ansible-versions.sh

lint: setup
	$(BIN)/ruff check racfg lab tests bench validators roles playbooks
	$(BIN)/yamllint -s inventory playbooks roles
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/ansible-lint -q --offline playbooks roles

## docs: the manual (docs/, MkDocs); --strict fails on a dead link or a page the nav misses
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir .racfg/site

unit: setup
	$(BIN)/pytest -q -m "not lab" tests

# benchlib.py, cpu_account.py and runner_alone.py are what the benchmarks use, not benchmarks
bench: setup
	for b in bench/*.py; do case $$b in bench/benchlib.py|bench/cpu_account.py|bench/runner_alone.py) ;; \
		*) $(BIN)/python $$b;; esac; done

clean:
	rm -rf .racfg .pytest_cache .ruff_cache
