#!/usr/bin/env bash
# One device call for the LeNet stages of issue 12: GPU tests, quick in-process timings of the
# one-kernel variants and of batch sizes, the study's sweeps, Nsight Compute on the constant- vs
# shared-memory pair; logs tarred under $OUT, a summary printed last. Every phase has its own
# time limit and a phase that would overrun the call's budget is skipped (and says so).
#   scripts/lenet_session.sh PHASE...   phases: tests bench batches sweep batch metrics ncu pack
# Run from the repository root after `source .device-kit/activate.sh`. BUDGET: seconds (450).
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/lenet-logs; RUNS=reports/dev
mkdir -p "$OUT" "$LOGS" "$RUNS"
SUMMARY="$LOGS/summary.txt"; : >"$SUMMARY"
START=$(date +%s); BUDGET=${BUDGET:-450}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
limit() {  # limit CAP: the seconds a phase may take: CAP, or what is left less 15 s for packing
  local l=$(($(left) - 15)); [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
run() {  # run NAME CAP CMD...: CMD under timeout, its log kept, its tail in the summary
  local name=$1 cap=$(limit "$2"); shift 2
  if [ "$cap" -lt 20 ]; then say "== $name: SKIPPED, $(left) s left"; return; fi
  local t0=$(date +%s)
  timeout "$cap" "$@" >"$LOGS/$name.log" 2>&1
  say "== $name: exit $?, $(($(date +%s) - t0)) s (limit $cap): $*"
}
sweep_table() {  # the staged table of a sweep log
  grep -v '^\(PASS\|FAIL\|SKIPPED\|ERROR\|TIMEOUT\)  \|^  ceilings\|^change' "$LOGS/$1.log" | tail -40 >>"$SUMMARY"
}
STAGES_NEW="torch_pinned,torch_compile,jax_gpu,pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph"
for phase in "$@"; do
  case $phase in
    tests)
      run gpu-tests 110 python3 -m pytest -m gpu -q -p no:cacheprovider \
        tests/gpu/test_lenet_stages.py -k "overlap_fusion or one_kernel or uint8 or graph or torch_pinned or jax_gpu"
      tail -3 "$LOGS/gpu-tests.log" >>"$SUMMARY"
      grep -E '^(FAILED|ERROR)|Error|assert' "$LOGS/gpu-tests.log" | head -12 >>"$SUMMARY" ;;
    bench)
      for v in "" "--set one_kernel.imgs=4" "--set one_kernel.imgs=16"; do
        run "bench${v//[^0-9]/}" 35 python3 scripts/bench_stages.py --repeat 20 \
          --stages pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph $v
        grep -E '^(floor|pinned|overlap|one_kernel|uint8|graph|    )' "$LOGS/bench${v//[^0-9]/}.log" >>"$SUMMARY"
      done ;;
    batches)
      run batches 90 python3 scripts/bench_batches.py \
        --stages torch_pinned,jax_gpu,pinned,overlap_fusion,one_kernel,uint8_input,graph
      tail -12 "$LOGS/batches.log" >>"$SUMMARY" ;;
    sweep) run sweep 220 profgen sweep lenet --out "$RUNS"; sweep_table sweep ;;
    batch)
      run batch 150 profgen sweep lenet --out "$RUNS" --backend none --items 4096 --repeat 3 \
        --warmup 1 --stages torch_pinned,torch_compile,jax_gpu,one_kernel,uint8_input,graph \
        --batch-sizes 1,4,16,64,256,1024,4096
      sweep_table batch ;;
    metrics)
      run metrics 90 profgen sweep lenet --out "$RUNS" --metrics --backend none \
        --stages overlap_fusion,one_kernel,one_kernel_const
      sweep_table metrics ;;
    ncu)  # sections that say where each variant's warps wait (constant cache vs shared memory)
      run ncu 60 ncu --csv --page details -k LeNet_Fused -c 26 --section SpeedOfLight \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        --section InstructionStats --section MemoryWorkloadAnalysis_Tables \
        python3 scripts/bench_stages.py --repeat 1 --warmup 0 --stages one_kernel,one_kernel_const
      python3 - "$LOGS/ncu.log" >>"$SUMMARY" 2>&1 <<'PY'
import csv, io, sys
text = open(sys.argv[1]).read()
start = text.find('"ID"')
rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
keep = ("Duration", "Stall", "Registers", "Achieved Occupancy", "Executed Instructions",
        "Shared", "Bank", "Compute (SM) Throughput", "Grid Size", "Issued Ipc")
seen = {}
grids = {r["ID"] for r in rows if r.get("Metric Name") == "Grid Size" and r["Metric Value"].replace(",", "") == "1250"}
for r in rows:
    if r["ID"] in grids and any(k in r.get("Metric Name", "") for k in keep):
        seen.setdefault(r["ID"], []).append(f'{r["Metric Name"]}={r["Metric Value"]}')
for i, vals in seen.items():
    print("ncu launch", i, "; ".join(vals)[:900])
print(f"ncu: {len(rows)} rows, {len(seen)} launches")
PY
      ;;
    pack)
      cp -r "$RUNS" "$LOGS/runs" 2>/dev/null
      find "$LOGS/runs" -name '*.npz' -size +5M -delete 2>/dev/null
      tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
      ls -la "$OUT" >>"$SUMMARY"
      echo; echo "======== SUMMARY ($(($(date +%s) - START)) s)"; cat "$SUMMARY" ;;
  esac
done
