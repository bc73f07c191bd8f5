#!/usr/bin/env bash
# One device call for `profgen serve` (issue 13): the serve GPU tests, then LeNet served under
# load (the best custom stage and torch eager / torch CUDA graph), the offline sweep at the same
# batch sizes, logs and runs under $OUT, the summary last.
#   scripts/serve_session.sh [quick]
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/serve-logs; RUNS=reports/serve-dev
mkdir -p "$OUT" "$LOGS" "$RUNS"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY" >/dev/null; }
serve() {  # serve NAME ARGS...
  local name=$1; shift
  local t0=$(date +%s)
  timeout 200 profgen serve lenet --out "$RUNS" "$@" >"$LOGS/serve-$name.log" 2>&1
  local rc=$?
  say "== serve $name: profgen serve lenet $* : exit $rc, $(( $(date +%s) - t0 )) s"
  grep -v '^\(PASS\|FAIL\|SKIPPED\|ERROR\|TIMEOUT\)  ' "$LOGS/serve-$name.log" | tail -60 >>"$SUMMARY"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$SUMMARY" 2>&1
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_serve.py >"$LOGS/gpu-tests.log" 2>&1
say "== serve gpu tests: $(tail -1 "$LOGS/gpu-tests.log")"
grep -E '^(FAILED|ERROR|E  )' "$LOGS/gpu-tests.log" | head -30 >>"$SUMMARY"
serve overhead --stage overlap_fusion --concurrency 1 --max-batch 1 --max-wait-us 0 --streams 1 --graphs off,on --duration-s 1
serve overhead-fc --stage fc_coalesced --concurrency 1 --max-batch 1 --max-wait-us 0 --streams 1 --graphs off,on --duration-s 1
if [ "${1:-}" = quick ]; then
  serve quick --stage overlap_fusion --concurrency 1,16,64 --max-batch 64 --max-wait-us 50 --streams 1,4 --graphs off,on --duration-s 0.5 --warmup-s 0.2
  serve torch --stage torch_gpu --concurrency 1,16 --max-batch 64 --max-wait-us 50 --graphs off,on --duration-s 0.5 --warmup-s 0.2
else
  serve main --stage overlap_fusion --concurrency 1,4,16,64,256,1024 --max-batch 64,256 --max-wait-us 50 --streams 1,4 --graphs off,on --duration-s 1 --warmup-s 0.3 --slo-ms 1
  serve torch --stage torch_gpu --concurrency 1,16,64,256 --max-batch 64 --max-wait-us 50 --streams 1,4 --graphs off,on --duration-s 1 --warmup-s 0.3 --slo-ms 1
  serve open --stage overlap_fusion --concurrency 1 --rate 10000,100000,300000,1000000 --max-batch 64 --max-wait-us 50 --streams 4 --graphs on --duration-s 1 --warmup-s 0.3
  timeout 150 profgen sweep lenet --stages overlap_fusion,torch_gpu --items 4096 --batch-sizes 1,64,256 --backend none --out "$RUNS" >"$LOGS/sweep.log" 2>&1
  say "== offline sweep (exit $?):"; tail -8 "$LOGS/sweep.log" >>"$SUMMARY"
  d=$(tail -1 "$LOGS/sweep.log"); [ -f "$d/batch_sweep.csv" ] && cat "$d/batch_sweep.csv" >>"$SUMMARY"
fi
for d in "$RUNS"/lenet-serve-*; do cp "$d/report.html" "$LOGS/$(basename "$d").html" 2>/dev/null; cp "$d"/serve_points.csv "$LOGS/$(basename "$d")-points.csv" 2>/dev/null; done
tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
tar -C "$RUNS" -cJf "$OUT/runs.tar.xz" --exclude='*.npz' . 2>/dev/null
cat "$SUMMARY"
