# fabriclab — see README.md. Every target that runs code sets up first if needed.
VENV     ?= .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.fabriclab-setup

PYTEST_ARGS ?=

# run-topology passes only the variables the user gave (command line or environment):
# each scenario keeps its own topology and flow-control mode otherwise. (FC cannot have
# a `?=` default: make predefines it as the Fortran compiler.)
given = $(filter command line environment,$(origin $(1)))
option = $(if $(call given,$(1)),$(2) '$($(1))')

.PHONY: setup demo run-topology test bench lint clean cleanup

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh

## demo: the default scenario on the embedded switch, with a result table
demo: setup
	$(PY) -m fabriclab.cli run --scenario stream --target embedded

## run-topology: any topology / scenario / flow-control mode / switch target; each optional
run-topology: setup
	$(PY) -m fabriclab.cli run $(call option,SCENARIO,--scenario) $(call option,TOPO,--topo) \
	  $(call option,FC,--fc) $(call option,TARGET,--target) $(call option,COMPILER,--compiler) \
	  $(call option,SWITCH,--switch)

## test: the suite, as two pytest processes at once (scripts/test.sh says how they split)
test: setup
	PYTHON=$(PY) bash scripts/test.sh $(PYTEST_ARGS)

bench: setup
	$(PY) -m bench

lint: setup
	$(VENV)/bin/ruff check .

## cleanup: remove what an interrupted run left behind (by its ledger: PIDs, interface and namespace names)
cleanup:
	@if [ -x $(PY) ]; then $(PY) -m fabriclab.cli cleanup; fi

## clean: remove only what the project created
clean: cleanup
	rm -rf build results $(VENV) .pytest_cache .ruff_cache *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
