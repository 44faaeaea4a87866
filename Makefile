# Two commands for a newcomer: `make run` and `make test` (both install what is missing).
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.carta-installed
SAMPLES ?= samples
export CARTA_DATA_DIR ?= data
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint samples clean

install: $(STAMP)

# Re-run the install only when the dependency list or the installer changed.
$(STAMP): pyproject.toml scripts/install.sh
	VENV=$(VENV) bash scripts/install.sh
	touch $(STAMP)

$(SAMPLES)/.generated: $(STAMP) scripts/make_samples.py
	$(PY) scripts/make_samples.py --out $(SAMPLES)
	touch $@

samples: $(SAMPLES)/.generated

run: install samples
	$(VENV)/bin/carta serve --host 127.0.0.1 --port 8000 --ingest-samples $(SAMPLES)

test: install samples
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) $(SAMPLES) data .pytest_cache
