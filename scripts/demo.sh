#!/usr/bin/env bash
# The main job: validate every example spec, then plan workloads over the full catalog, print the
# ranked options and write reports: out/plan.html (self-contained, plotly embedded) and Markdown.
# Exit 3 from `plan` means no option met the hard constraints (the reasons are printed).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
mkdir -p out
for spec in examples/*.yaml; do
  $BIN/infrafit check "$spec"
done
$BIN/infrafit plan examples/chatbot-asia.yaml --top 4 --report out/plan.html
$BIN/infrafit plan examples/custom-ops-training.yaml --top 3 --report out/plan-training.md
$BIN/infrafit plan examples/tabular-xgboost.yaml --top 3 --report out/plan-tabular.md
echo "reports: out/plan.html, out/plan-training.md, out/plan-tabular.md" >&2
echo "run infrafit yourself: .venv/bin/infrafit plan examples/chatbot-asia.yaml  (or: source .venv/bin/activate)" >&2
