#!/usr/bin/env bash
# One device call for the MobileNetV2 study: GPU tests, sweeps, logs and trimmed runs under $OUT.
#   scripts/device_mobilenetv2.sh PHASE...   phases: tests smoke sweep batch pack
# Run from the repository root after `source .device-kit/activate.sh`. The summary is printed last.
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/mn-logs; RUNS=/tmp/mn-runs; KEEP=/tmp/mn-keep
mkdir -p "$OUT" "$LOGS" "$RUNS" "$KEEP"
SUMMARY="$OUT/summary.txt"
END=$(( $(date +%s) + ${BUDGET:-440} ))  # every phase stops in time for `pack`
say() { echo "$*" >>"$SUMMARY"; }
cap() {  # cap SECONDS: the smaller of SECONDS and what is left of the budget (at least 1)
  local left=$(( END - $(date +%s) ))
  [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"
}
sweep() {  # sweep NAME SECONDS ARGS...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$(cap "$limit")" profgen sweep mobilenetv2 --out "$RUNS" "$@" >"$LOGS/sweep-$name.log" 2>&1
  local rc=$? t1=$(date +%s)
  local dir=$(tail -1 "$LOGS/sweep-$name.log")
  say "== sweep $name ($*): exit $rc, $((t1 - t0)) s wall, run $dir"
  grep -v '^\(PASS\|FAIL\|SKIPPED\|ERROR\|TIMEOUT\)  \|^  ceilings\|^change' "$LOGS/sweep-$name.log" | tail -30 >>"$SUMMARY"
  grep -E '^(FAIL|ERROR|TIMEOUT) ' "$LOGS/sweep-$name.log" | head -8 >>"$SUMMARY"
  if [ -d "$dir" ]; then
    python3 scripts/trim_run.py "$dir" "$KEEP/$name" >/dev/null 2>>"$LOGS/trim.log" || say "trim $name failed"
    cp "$dir/report.html" "$KEEP/$name-report.html" 2>/dev/null
    for t in stages kernels ranges gpu_activities batch_sizes; do
      [ -f "$dir/$t.csv" ] && cp "$dir/$t.csv" "$KEEP/$name-$t.csv"
    done
  fi
}
for phase in "$@"; do
  case $phase in
    tests)
      t0=$(date +%s)
      timeout "$(cap 120)" python3 -m pytest -m gpu -q -p no:cacheprovider -s tests/gpu/test_mobilenetv2.py >"$LOGS/gpu-tests.log" 2>&1
      say "== gpu tests ($(( $(date +%s) - t0 )) s): $(tail -1 "$LOGS/gpu-tests.log")"
      grep -E '^(FAILED|ERROR)|max relative error' "$LOGS/gpu-tests.log" | head -20 >>"$SUMMARY" ;;
    smoke) sweep smoke 120 --images 16 --backend none ;;
    sweep) sweep main 200 ;;
    layers)
      dir=$(tail -1 "$LOGS/sweep-main.log")
      timeout "$(cap 60)" python3 scripts/layer_tables.py "$dir" >"$LOGS/layers.log" 2>&1
      say "== per kind and per layer (main sweep): rc $?"
      cat "$LOGS/layers.log" >>"$SUMMARY" ;;
    batch) sweep batch 150 --backend none --batch-sizes 1,32,256 --stages torch_gpu,torch_graph,tuned,pinned,graph ;;
    torchvision)
      if timeout "$(cap 90)" python3 scripts/export_torchvision.py /tmp/tv.onnx >"$LOGS/tv-export.log" 2>&1; then
        say "== torchvision export: $(tail -1 "$LOGS/tv-export.log")"
        sweep torchvision 120 --onnx /tmp/tv.onnx --images 32 --backend none
      else
        say "== torchvision export failed: $(tail -2 "$LOGS/tv-export.log")"
      fi ;;
    pack)
      tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
      tar -C "$KEEP" -cJf "$OUT/keep.tar.xz" . 2>/dev/null
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$SUMMARY" 2>&1
      cat "$SUMMARY" ;;
  esac
done
