#!/usr/bin/env bash
# confseq, Howard & Waudby-Smith's confidence sequences: the oracle of tests/stats/test_sequential.py's confseq tests
# (tests only). Its latest release on PyPI (0.0.11) builds with pybind11~=2.6, which cannot compile for Python 3.11,
# and needs Boost's headers (Debian: libboost-dev, installed by .ci/run): so its wheel is built here with a current
# pybind11 in a throwaway environment, then installed into the venv. The build's output goes to a log file
# (VENV/confseq-build.log); a failure is one line naming it. Usage: .ci/confseq.sh [VENV_BIN]
set -euo pipefail
BIN="${1:-.venv/bin}"
if "$BIN/pip" show -q confseq >/dev/null 2>&1; then
  exit 0
fi
log="$(cd "$BIN/.." && pwd)/confseq-build.log"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
if ! {
  "$BIN/python" -m venv "$build/env" &&
  "$build/env/bin/pip" install -q "pybind11>=2.10" scikit-build cmake ninja setuptools wheel numpy &&
  "$build/env/bin/pip" wheel -q --no-build-isolation --no-deps --no-binary confseq "confseq==0.0.11" -w "$build/wheel" &&
  "$BIN/pip" install -q "$build"/wheel/confseq-0.0.11-*.whl
} >"$log" 2>&1; then
  echo "warning: could not build confseq (it needs Boost's headers: apt-get install libboost-dev); its oracle tests skip (and fail under CI=true); build log: $log" >&2
  exit 1
fi
