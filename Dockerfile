# Carta, CPU image. Untested: the machine this was written on has no Docker engine (see README).
#   docker build -t carta .
#   docker run --rm -p 8000:8000 -v carta-data:/data carta
#   (with a Qdrant server and volumes for both: docker-compose.yml)
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    VENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    CARTA_DATA_DIR=/data \
    CARTA_LOG_JSON=true

# OCR: tesseract with Portuguese and English data, and the FreeDict pt/fr <-> en dictionaries
# (scripts/install.sh then skips its own apt steps).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        tesseract-ocr tesseract-ocr-por tesseract-ocr-eng \
        dict-freedict-por-eng dict-freedict-eng-por dict-freedict-fra-eng dict-freedict-eng-fra \
    && rm -rf /var/lib/apt/lists/*

# The torch pair first, in its own layer, so code changes do not download it again.
# Keep these pins in step with scripts/install.sh (which re-checks them below).
RUN python3 -m venv $VENV \
    && $VENV/bin/python -m pip install --quiet --upgrade pip setuptools wheel \
    && $VENV/bin/python -m pip install --quiet "torch==2.14.1" "torchvision==0.29.1"

WORKDIR /app
COPY . /app
# The project itself (editable, from /app), its dependencies and colpali-engine (--no-deps).
RUN CARTA_SKIP_BROWSER=1 bash scripts/install.sh \
    && python scripts/make_samples.py --out /app/samples

RUN useradd --create-home --uid 1000 carta \
    && mkdir -p /data \
    && chown carta:carta /data
USER carta
VOLUME ["/data"]
EXPOSE 8000

# /readyz checks the store, the registry, the text model and the job table.
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"

CMD ["carta", "serve", "--host", "0.0.0.0", "--port", "8000", "--ingest-samples", "/app/samples"]
