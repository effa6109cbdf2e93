#!/usr/bin/env bash
# The main job on the shipped examples. Until the planner lands: check every example and list the catalog.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
for spec in examples/*.yaml; do
  [ -e "$spec" ] || continue
  echo "== $spec" >&2
  $BIN/infrafit check "$spec" --explain
done
$BIN/infrafit catalog accelerators || true
