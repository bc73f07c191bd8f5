#!/usr/bin/env bash
# One device call for the LeNet stages of issue 12: GPU tests, quick in-process timings of the
# one-kernel variants and of batch sizes, the study's sweeps, Nsight Compute on the constant- vs
# shared-memory pair; logs tarred under $OUT, a summary printed last. Every phase has its own
# time limit and a phase that would overrun the call's budget is skipped (and says so).
#   scripts/lenet_session.sh PHASE...   phases: tests tests2 bench gap batches staged sweep batch
#                                       small metrics ncu ncu2 gaptests harness knobs2 none
#                                       cupti2 knobs3 final batches2 pack
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
    tests2)  # the chunked and graph stages only
      run gpu-tests2 80 python3 -m pytest -m gpu -q -p no:cacheprovider \
        tests/gpu/test_lenet_stages.py -k "overlap_fusion or one_kernel or uint8 or graph"
      tail -3 "$LOGS/gpu-tests2.log" >>"$SUMMARY"
      grep -E '^(FAILED|ERROR)|Error|assert' "$LOGS/gpu-tests2.log" | head -12 >>"$SUMMARY" ;;
    gap)  # the same calls with the GPU left idle 10 ms before each, as the sweep's checks do
      for g in 0 10; do
        run "gap$g" 30 python3 scripts/bench_stages.py --repeat 20 --gap-ms $g \
          --stages pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph
        grep -E '^(floor|pinned|overlap|one_kernel|uint8|graph|    )' "$LOGS/gap$g.log" >>"$SUMMARY"
      done ;;
    knobs)  # each new choice against the one before it, at 10,000 images
      K=0
      for v in "one_kernel.small_imgs=8 uint8_input.small_imgs=8 graph.small_imgs=8" \
               "one_kernel.fresh_min_images=100000 uint8_input.fresh_min_images=100000" \
               "uint8_input.min_chunk_images=1024 graph.large_graphs=0" \
               "uint8_input.min_chunk_images=4096 graph.min_chunk_images=2048" \
               "one_kernel.imgs=4 uint8_input.imgs=4 graph.imgs=4" \
               "uint8_input.const_weights=1 graph.const_weights=1"; do
        K=$((K + 1)); sets=""; for kv in $v; do sets="$sets --set $kv"; done
        run "knob$K" 25 python3 scripts/bench_stages.py --repeat 20 \
          --stages one_kernel,uint8_input,graph $sets
        say "   knob$K: $v"
        grep -E '^(one_kernel|uint8|graph|    )' "$LOGS/knob$K.log" >>"$SUMMARY"
      done ;;
    staged)
      run staged 110 profgen sweep lenet --out "$RUNS" \
        --stages torch_pinned,torch_compile,jax_gpu,pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph
      sweep_table staged ;;
    small)  # the report's batch figure and crossing table from profgen itself, a few points
      run small 90 profgen sweep lenet --out "$RUNS" --backend none --items 4096 --repeat 3 \
        --warmup 1 --stages torch_pinned,one_kernel,graph --batch-sizes 1,64,4096
      sweep_table small
      d=$(tail -1 "$LOGS/small.log"); [ -d "$d" ] && grep -o 'custom is faster\|from batch [0-9,]* to [0-9,]*' "$d/report.html" | head -6 >>"$SUMMARY" ;;
    ncu2)  # raw counters of the constant/shared pair, as registered (8 images a block)
      for v in 8; do
        run "ncu$v" 60 ncu --csv --page raw -k LeNet_Fused --section SpeedOfLight \
          --section WarpStateStats --section Occupancy --section InstructionStats --section LaunchStats \
          --section MemoryWorkloadAnalysis_Tables --section SchedulerStats \
          python3 scripts/bench_stages.py --repeat 1 --warmup 0 --stages one_kernel,one_kernel_const \
          --set one_kernel.imgs=$v --set one_kernel_const.imgs=$v
        python3 - "$LOGS/ncu$v.log" "$v" >>"$SUMMARY" 2>&1 <<'PY'
import csv, io, re, sys
text = open(sys.argv[1]).read()
start = text.find('"ID"')
rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
units, rows = (rows[0], rows[1:]) if rows else ({}, [])
want = re.compile(r"gpu__time_duration.sum|warps_issue_stalled_(imc_miss|short_scoreboard|mio_throttle|long_scoreboard|wait|barrier|math_pipe_throttle|not_selected|no_instruction|lg_throttle|selected)_per_issue_active|inst_executed.sum$|smsp__inst_executed_op_(shared|ldc|uldc)|l1tex__data_pipe_lsu_wavefronts_mem_shared.sum$|l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum$|warps_active.avg.pct_of_peak|smsp__issue_active.avg.pct|sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active|launch__grid_size|shared_mem_per_block_dynamic")
big = [r for r in rows if r.get("launch__grid_size", "").replace(",", "") in ("1250", "2500")]
names = ["one_kernel (shared)", "one_kernel_const"]
for i, r in enumerate(big[-10:][::5] if len(big) >= 10 else big):
    vals = [f"{k}={v}" for k, v in r.items() if want.search(k)]
    print(f"ncu imgs={sys.argv[2]} {names[i] if i < 2 else i}: " + "; ".join(vals))
print(f"ncu imgs={sys.argv[2]}: {len(rows)} launches, {len(big)} of the full batch")
PY
      done ;;
    gaptests)  # the chunked stages, and their tuning knobs, on the GPU
      run gpu-gap 150 python3 -m pytest -m gpu -q -p no:cacheprovider \
        tests/gpu/test_lenet_stages.py -k "overlap_fusion or one_kernel or uint8 or graph"
      tail -3 "$LOGS/gpu-gap.log" >>"$SUMMARY"
      grep -E '^(FAILED|ERROR)|Error|assert' "$LOGS/gpu-gap.log" | head -12 >>"$SUMMARY" ;;
    harness)  # outputs checked after the timed repeats against between calls, through the worker
      run harness 80 env OUT="$LOGS" python3 scripts/bench_harness.py --rounds 2 \
        --stages one_kernel,uint8_input
      tail -10 "$LOGS/harness.log" >>"$SUMMARY" ;;
    knobs2)  # the tuning knobs after the idle gap, interleaved in one process
      T="--try vec=fc_vec:1 --try tail1=taper:1,small_chunk_images:700"
      T="$T --try tail2=taper:2,small_chunk_images:700 --try tail3=taper:3,small_chunk_images:700"
      T="$T --try vtail2=fc_vec:1,taper:2,small_chunk_images:700 --try vcmb4=fc_vec:1,const_weights:1,min_blocks:4"
      T="$T --try vconst=fc_vec:1,const_weights:1 --try s8=streams:8"
      T="$T --try c4=min_chunk_images:2048,taper:2,small_chunk_images:700"
      T="$T --try c16=max_chunks:16,min_chunk_images:512,taper:1,small_chunk_images:700"
      run knobs2 150 env OUT="$LOGS" python3 scripts/bench_knobs.py --repeat 20 --latency \
        --stages one_kernel,uint8_input,graph $T
      grep -vE '^\s*$' "$LOGS/knobs2.log" | tail -60 >>"$SUMMARY" ;;
    none)  # the staged table with the harness's timing, no tracer
      run none 130 profgen sweep lenet --out "$RUNS" --backend none \
        --stages torch_pinned,torch_compile,pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph
      sweep_table none ;;
    cupti2)  # the profiled pass (tracer flush between calls, outputs held) on two stages
      run cupti2 60 profgen sweep lenet --out "$RUNS" --stages one_kernel,uint8_input
      sweep_table cupti2 ;;
    knobs3)  # the new defaults (base) against each of them undone, and a few chunk counts
      T="--try old=fc_vec:0,stage_all:0,early_copy:0,max_chunks:8,taper:0,small_chunk_images:0,lead:0"
      T="$T --try novec=fc_vec:0 --try nostage=stage_all:0 --try late=early_copy:0"
      T="$T --try c8=max_chunks:8 --try t0=taper:0,small_chunk_images:0 --try t3=taper:3"
      T="$T --try c3=max_chunks:3 --try c2=max_chunks:2 --try lead0=lead:0 --try lead2=lead:2"
      run knobs3 60 env OUT="$LOGS" python3 scripts/bench_knobs.py --repeat 20 \
        --latency base --latency old --stages one_kernel,uint8_input,graph $T
      grep -vE '^\s*$' "$LOGS/knobs3.log" | tail -70 >>"$SUMMARY" ;;
    final)  # the staged table of the stages the targets name, no tracer
      run final 80 profgen sweep lenet --out "$RUNS" --backend none \
        --stages torch_pinned,torch_compile,one_kernel,uint8_input,graph
      sweep_table final ;;
    batches2)  # custom stages and torch eager at batch sizes around the chunking changes
      run batches2 120 env OUT="$LOGS" python3 scripts/bench_batches.py --repeat 3 \
        --batch-sizes 1,16,256,1024,2048,3000,4096 \
        --stages pinned,overlap_fusion,one_kernel,uint8_input,graph,torch_pinned
      tail -12 "$LOGS/batches2.log" >>"$SUMMARY" ;;
    bench)
      for v in "" "--set one_kernel.imgs=4" "--set one_kernel.imgs=16"; do
        run "bench${v//[^0-9]/}" 35 python3 scripts/bench_stages.py --repeat 20 \
          --stages pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph $v
        grep -E '^(floor|pinned|overlap|one_kernel|uint8|graph|    )' "$LOGS/bench${v//[^0-9]/}.log" >>"$SUMMARY"
      done ;;
    batches)  # every batch size in one process a stage (the figure's numbers, quickly)
      run batches 200 env OUT="$LOGS" python3 scripts/bench_batches.py --repeat 3 \
        --stages pinned,overlap_fusion,one_kernel,one_kernel_const,uint8_input,graph,torch_pinned,jax_gpu,torch_compile
      tail -16 "$LOGS/batches.log" >>"$SUMMARY"
      python3 scripts/bench_batches.py --crossings "$LOGS/batches.json" >"$LOGS/crossings.log" 2>&1
      cat "$LOGS/crossings.log" >>"$SUMMARY" ;;
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
