#!/usr/bin/env bash
# The main job: plan a workload over the full catalog, print the ranked options and write the HTML
# report (self-contained, plotly embedded) to out/plan.html. Exit 3 from `plan` means no option met
# the hard constraints (the reasons are printed); the demo then moves on.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
mkdir -p out
$BIN/infrafit plan examples/custom-ops-training.yaml --top 4 --report out/plan.html
$BIN/infrafit plan examples/lora-finetune-70b.yaml --top 3 --report out/plan-lora.md
$BIN/infrafit plan examples/tabular-xgboost.yaml --top 3 --report out/plan-tabular.md
echo "reports: out/plan.html, out/plan-lora.md, out/plan-tabular.md" >&2
