#!/usr/bin/env bash
# One device call for the serve loop's speed (issue 13's unmet targets): the serve GPU tests; an
# A/B in one session of the branch base's serve loop (scripts/serve_ab/base, copied over a copy
# of this tree in /tmp/base) against this tree's, at C=1 (server overhead) and at high load
# (throughput against offline); a probe of each step's host time; then this tree alone at more
# load points, the offline sweep at the same batch sizes and the sample's command. Logs and runs under $OUT, the summary last.
#   scripts/serve_fast_session.sh
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/sf-logs; RUNS=$PWD/reports/sf-dev; T0=$(date +%s)
mkdir -p "$OUT" "$LOGS" "$RUNS"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" >>"$SUMMARY"; }
left() { echo $(( ${BUDGET:-460} - ($(date +%s) - T0) )); }
serve() {  # serve TREE NAME ARGS...: profgen serve lenet from TREE (new: here, base: /tmp/base)
  local tree=$1 name=$2; shift 2
  local dir=$PWD; [ "$tree" = base ] && dir=/tmp/base
  if [ "$(left)" -lt 40 ]; then say "== $tree $name: SKIPPED (time)"; return; fi
  local t0=$(date +%s)
  (cd "$dir" && timeout $(( $(left) - 15 )) python3 -c "$PROFGEN" serve lenet --out "$RUNS/$tree" "$@") \
    >"$LOGS/$tree-$name.log" 2>&1
  local rc=$? run=$(tail -1 "$LOGS/$tree-$name.log")
  say "== $tree $name: profgen serve lenet $* : exit $rc, $(( $(date +%s) - t0 )) s"
  [ -d "$run" ] && python3 scripts/serve_ab/summary.py "$tree-$name" "$run" >>"$SUMMARY" 2>&1
  grep -E "^(The configuration|Offline|Knee)" "$LOGS/$tree-$name.log" >>"$SUMMARY"
}
# profgen from the current directory's tree (python -c puts the cwd first on sys.path)
PROFGEN='import sys; from profiler.cli import main; sys.exit(main())'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >>"$SUMMARY" 2>&1
rm -rf /tmp/base && mkdir -p /tmp/base && tar --exclude=./reports --exclude=./.device-kit -cf - . | tar -xf - -C /tmp/base
cp scripts/serve_ab/base/*.py /tmp/base/profiler/collect/serve/
say "base tree imports $(cd /tmp/base && python3 -c 'import profiler.collect.serve.loop as m; print(m.__file__, hasattr(m, "RequestLog"))')"
say "new tree imports $(python3 -c 'import profiler.collect.serve.loop as m; print(m.__file__, hasattr(m, "RequestLog"))')"
ONE="--stage overlap_fusion --concurrency 1 --streams 1 --graphs off,on --duration-s 1 --warmup-s 0.3 --slo-ms 1"
timeout 100 python3 scripts/serve_ab/probe.py >"$LOGS/probe.log" 2>&1
say "== probe (exit $?): host us per step of a batch, median"; tail -8 "$LOGS/probe.log" >>"$SUMMARY"
serve new c1-nowait $ONE --max-batch 1 --max-wait-us 0 --keep-records
serve base c1-nowait $ONE --max-batch 1 --max-wait-us 0
serve base c1-b64w50 $ONE --max-batch 64 --max-wait-us 50
serve new c1-b64w50 $ONE --max-batch 64 --max-wait-us 50 --keep-records
serve new c1-nowait-again $ONE --max-batch 1 --max-wait-us 0
serve base c1-nowait-again $ONE --max-batch 1 --max-wait-us 0
timeout 90 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_serve.py >"$LOGS/gpu-tests.log" 2>&1
say "== serve gpu tests: $(tail -1 "$LOGS/gpu-tests.log")"
grep -E '^(FAILED|ERROR|E  )' "$LOGS/gpu-tests.log" | head -20 >>"$SUMMARY"
serve new best --stage overlap_fusion --concurrency 256,512,1024 --max-batch 256 --max-wait-us 50 \
  --streams 1,2,4 --graphs off,on --duration-s 1 --warmup-s 0.3 --slo-ms 1
if [ "$(left)" -gt 60 ]; then
  timeout 60 profgen sweep lenet --stages overlap_fusion --items 4096 --batch-sizes 1,64,256 \
    --backend none --out "$RUNS/sweep" >"$LOGS/sweep.log" 2>&1
  say "== offline sweep (exit $?):"; d=$(tail -1 "$LOGS/sweep.log")
  [ -f "$d/batch_sweep.csv" ] && cat "$d/batch_sweep.csv" >>"$SUMMARY" || tail -5 "$LOGS/sweep.log" >>"$SUMMARY"
fi
serve new sample --stage overlap_fusion --concurrency 1,4,16,64,256,1024 --max-batch 64,256 --max-wait-us 50 \
  --streams 1,4 --graphs off,on --slo-ms 1 --duration-s 1 --warmup-s 0.3
say "== total $(( $(date +%s) - T0 )) s"
tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
tar -C "$RUNS" -cJf "$OUT/runs.tar.xz" --exclude='*.npz' --exclude='trace-*' . 2>/dev/null
tar -C "$RUNS" -cJf "$OUT/records.tar.xz" --wildcards '*.npz' . 2>/dev/null
cat "$SUMMARY"
