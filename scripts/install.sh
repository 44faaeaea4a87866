#!/usr/bin/env bash
# Create/refresh .venv with the pinned torch pair, the project and colpali-engine.
# Why this order: colpali-engine 0.3.18 declares torch<2.14, but the only torch +
# torchvision pair that imports cleanly here is 2.14.1 + 0.29.1 (ENVIRONMENT.md);
# colpali-engine runs fine on it, so it goes in last with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install --quiet --upgrade pip setuptools wheel
$PIP install --quiet "torch==2.14.1" "torchvision==0.29.1"
$PIP install --quiet -e ".[dev]"
$PIP install --quiet --no-deps "colpali-engine==0.3.18"

# Tesseract OCR (por + eng) from Debian: installed when missing and we are root.
if ! command -v tesseract >/dev/null 2>&1 || ! tesseract --list-langs 2>/dev/null | grep -q '^por$'; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing tesseract-ocr (por+eng) from Debian..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            tesseract-ocr tesseract-ocr-por tesseract-ocr-eng >/dev/null
    else
        echo "NOTE: OCR needs tesseract with Portuguese data. Run: sudo apt-get install -y tesseract-ocr tesseract-ocr-por tesseract-ocr-eng"
    fi
fi

# FreeDict pt/fr <-> en dictionaries (service/query/dictionary.py): a question's words met in a
# page of another language. Without them Carta uses its built-in glossary alone.
DICTS="dict-freedict-por-eng dict-freedict-eng-por dict-freedict-fra-eng dict-freedict-eng-fra"
if [ ! -f /usr/share/dictd/freedict-eng-fra.index ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing the FreeDict pt/fr <-> en dictionaries from Debian..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $DICTS >/dev/null
    else
        echo "NOTE: cross-language word matching is better with the FreeDict dictionaries. Run: sudo apt-get install -y $DICTS"
    fi
fi

# Headless Chromium + chromedriver for the web UI's browser tests (tests/e2e/test_web_ui.py).
# CARTA_SKIP_BROWSER=1 leaves them out (the Docker image does not run tests).
if [ "${CARTA_SKIP_BROWSER:-0}" != "1" ] && ! { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing chromium and chromium-driver from Debian (browser tests)..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else
        echo "NOTE: the web UI browser tests need Chromium. Run: sudo apt-get install -y chromium chromium-driver"
    fi
fi

# The web UI's map library, offline basemap and API-docs assets, vendored from npm (pinned):
# node + npm are needed at install time only (Debian's, when missing and we are root).
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing nodejs and npm from Debian (vendoring the web UI's assets)..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
bash scripts/vendor_ui.sh
