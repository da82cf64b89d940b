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

# ffmpeg converts voice notes; espeak-ng and sox make the real speech the voice tests send.
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v espeak-ng >/dev/null 2>&1 \
  || ! command -v sox >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    ffmpeg espeak-ng sox
fi

# [test] is the one list of what the tests need (pyproject.toml): pytest and its helpers, and the
# extras the tests exercise: [channels] (every chat platform's SDK, tested against its fake) and
# [all] (the built-in model's server, whose tests pull the tiny model hash-checked; memory
# vectors; the offline recognizer and the document converters). A feature whose tests need
# another extra adds it there, not here. tests/test_first_command.py installs the README's first
# command once more, in a venv of its own (COUNTBOT_SKIP_INSTALL_TEST=1 leaves it out, saying so).
$PY -m pip install -q --disable-pip-version-check -e '.[test]'
$PY -m ruff check countbot tests bench
$PY -m ruff format --check countbot tests bench
# The layer contracts, with this interpreter's import-linter (lint-imports on PATH may be another's).
$PY -c 'import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())'
exec $PY -m pytest "$@"
