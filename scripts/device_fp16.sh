#!/usr/bin/env bash
# One device call for the MobileNetV2 fp16 work: the staged sweep with the fp16 stages, the
# GEMM-orientation measurement, the fp16 check against its twin, the GPU tests. Logs and the
# trimmed run under $OUT; the summary is printed last. Run from the repository root after
# `source .device-kit/activate.sh`:   scripts/device_fp16.sh [sweep] [orient] [check] [tests] pack
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/fp16-logs; RUNS=/tmp/fp16-runs; KEEP=/tmp/fp16-keep
mkdir -p "$OUT" "$LOGS" "$RUNS" "$KEEP"
SUMMARY="$OUT/summary.txt"
END=$(( $(date +%s) + ${BUDGET:-450} ))
say() { echo "$*" >>"$SUMMARY"; }
cap() { local left=$(( END - $(date +%s) )); [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"; }
for phase in "$@"; do
  t0=$(date +%s)
  case $phase in
    sweep)
      timeout "$(cap 170)" profgen sweep mobilenetv2 --out "$RUNS" \
        --stages torch_gpu,torch_fp16,tuned,graph,fp16 >"$LOGS/sweep.log" 2>&1
      rc=$?; dir=$(tail -1 "$LOGS/sweep.log")
      say "== sweep (exit $rc, $(( $(date +%s) - t0 )) s, run $dir)"
      grep -v '^\(PASS\|SKIPPED\)  \|^  ceilings\|^change' "$LOGS/sweep.log" | tail -24 >>"$SUMMARY"
      if [ -d "$dir" ]; then
        python3 scripts/trim_run.py "$dir" "$KEEP/fp16" >/dev/null 2>>"$LOGS/trim.log" || say "trim failed"
        cp "$dir/report.html" "$KEEP/fp16-report.html" 2>/dev/null
        for t in stages kernels ranges; do [ -f "$dir/$t.csv" ] && cp "$dir/$t.csv" "$KEEP/fp16-$t.csv"; done
      fi ;;
    orient)
      timeout "$(cap 120)" python3 scripts/gemm_orientation.py --batch 256 >"$LOGS/orient.log" 2>&1
      say "== GEMM orientation (exit $?, $(( $(date +%s) - t0 )) s)"; tail -40 "$LOGS/orient.log" >>"$SUMMARY" ;;
    check)
      timeout "$(cap 60)" python3 scripts/fp16_check.py --images 4 >"$LOGS/check.log" 2>&1
      say "== fp16 check (exit $?, $(( $(date +%s) - t0 )) s)"; tail -12 "$LOGS/check.log" >>"$SUMMARY" ;;
    tests)
      timeout "$(cap 200)" python3 -m pytest -m gpu -q -p no:cacheprovider -s \
        tests/gpu/test_mobilenetv2.py tests/gpu/test_mobilenetv2_planted.py >"$LOGS/tests.log" 2>&1
      say "== gpu tests (exit $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$LOGS/tests.log")"
      grep -E '^(FAILED|ERROR)|max relative error' "$LOGS/tests.log" | head -60 >>"$SUMMARY" ;;
    pack)
      tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
      tar -C "$KEEP" -cJf "$OUT/keep.tar.xz" . 2>/dev/null
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$SUMMARY" 2>&1
      cat "$SUMMARY" ;;
  esac
done
