#!/usr/bin/env bash
# One device call: the checks and measurements that need the GPU, logs and trimmed runs under $OUT.
#   scripts/device_session.sh PHASE...   phases: doctor gpu-tests gpu-tests-a gpu-tests-b cupti nsys metrics metrics-const fa1..fa9 regress
#                                        softmax old mobilenetv2 mobilenetv2-batch lenet-batch
#                                        serve-lenet serve-mobilenetv2 resnet50-tests resnet50
#                                        resnet50-steps resnet50-gemm resnet50-2048
#                                        resnet50-torch2048 pack
# `old` sweeps the code in .old/ (a copy of an earlier commit, carried) for an A/B in one session.
# Run from the repository root after `source .device-kit/activate.sh`.
set -u -o pipefail
OUT=${OUT:-/tmp/out}; LOGS=/tmp/dev-logs; RUNS=reports/dev; KEEP=/tmp/dev-keep
mkdir -p "$OUT" "$LOGS" "$RUNS" "$KEEP"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY"; }
sweep() {  # sweep NAME ARGS...: sweep $STUDY (default lenet), keep its log, print table and time
  local name=$1; shift
  local t0=$(date +%s)
  profgen sweep "${STUDY:-lenet}" --out "$RUNS" "$@" >"$LOGS/sweep-$name.log" 2>&1
  local rc=$? t1=$(date +%s)
  local dir=$(tail -1 "$LOGS/sweep-$name.log")
  say "== sweep $name ($*): exit $rc, $((t1 - t0)) s wall, run $dir"
  grep -v '^\(PASS\|FAIL\|SKIPPED\|ERROR\|TIMEOUT\)  \|^  ceilings\|^change' "$LOGS/sweep-$name.log" | tail -22 | tee -a "$SUMMARY"
  [ -d "$dir" ] && echo "$dir" >"$LOGS/run-$name.path"
}
serve() {  # serve NAME ARGS...: `profgen serve ARGS`, its log, table and run kept whole
  local name=$1; shift
  local t0=$(date +%s)
  profgen serve "$@" --out "$RUNS" >"$LOGS/serve-$name.log" 2>&1
  local rc=$? dir=$(tail -1 "$LOGS/serve-$name.log")
  say "== serve $name ($*): exit $rc, $(( $(date +%s) - t0 )) s wall, run $dir"
  grep -E "^(\| c|\| r|The configuration|Knee|Offline|server overhead at C=1)" "$LOGS/serve-$name.log" | head -40 | tee -a "$SUMMARY"
  grep -cE " holds$" "$LOGS/serve-$name.log" | sed 's/^/  Little holds at points: /' | tee -a "$SUMMARY"
  grep -E "BROKEN|broken" "$LOGS/serve-$name.log" | head -5 | tee -a "$SUMMARY"
  [ -d "$dir" ] && cp -r "$dir" "$KEEP/$name"
}
keep() {  # keep NAME: a trimmed copy of that sweep's run, its baseline file
  local dir=$(cat "$LOGS/run-$1.path" 2>/dev/null) || return
  python3 scripts/trim_run.py "$dir" "$KEEP/$1" >/dev/null 2>>"$LOGS/trim.log" || say "trim $1 failed"
  profgen baseline "$dir" -o "$KEEP/$1.json" >/dev/null 2>>"$LOGS/trim.log" || say "baseline $1 failed"
  cp "$dir/report.html" "$KEEP/$1-report.html" 2>/dev/null
}
for phase in "$@"; do
  case $phase in
    doctor) profgen doctor 2>&1 | tee "$LOGS/doctor.log" | tail -12 | tee -a "$SUMMARY" ;;
    gpu-tests)
      timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider tests >"$LOGS/gpu-tests.log" 2>&1
      say "== gpu tests: $(tail -1 "$LOGS/gpu-tests.log")"
      grep -E '^(FAILED|ERROR)' "$LOGS/gpu-tests.log" | head -20 | tee -a "$SUMMARY"
      grep -A30 'nsys/cupti' "$LOGS/gpu-tests.log" | head -25 >>"$SUMMARY" ;;
    gpu-tests-a|gpu-tests-b)  # the GPU tests in two halves, for calls of at most 10 minutes
      if [ "$phase" = gpu-tests-a ]; then
        set -- tests/gpu/test_studies.py tests/gpu/test_backends.py tests/gpu/test_import_reports.py \
          tests/gpu/test_serve.py
      else
        set -- tests/gpu/test_lenet_stages.py tests/gpu/test_mobilenetv2*.py tests/gpu/test_resnet50.py \
          tests/benchmarks
      fi
      timeout 420 python3 -m pytest -m gpu -q -p no:cacheprovider --durations=8 "$@" \
        >"$LOGS/$phase.log" 2>&1
      say "== $phase: $(tail -1 "$LOGS/$phase.log")"
      grep -E '^(FAILED|ERROR)' "$LOGS/$phase.log" | head -20 | tee -a "$SUMMARY" ;;
    cupti) sweep cupti; keep cupti ;;
    nsys) sweep nsys --backend nsys; keep nsys ;;
    metrics) sweep metrics --metrics; keep metrics ;;
    metrics-const)  # the stages of the constant-against-shared question, with Nsight Compute
      sweep metrics --metrics --stages overlap_fusion,one_kernel,one_kernel_const,uint8_input
      keep metrics ;;
    mcheck) sweep mcheck --metrics --stages torch_cpu,overlap_fusion ;;
    fa[0-9]) sweep "$phase"; keep "$phase" ;;
    regress) PROFGEN_TEST_UNCOALESCED_FC=1 sweep slow; keep slow ;;
    softmax) STUDY=examples/softmax.py sweep softmax; keep softmax ;;
    mobilenetv2) STUDY=mobilenetv2 sweep mobilenetv2; keep mobilenetv2 ;;
    resnet50-tests)  # the ResNet-50 study's GPU tests, and MobileNetV2's (the shared engine)
      timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/gpu/test_resnet50.py \
        tests/gpu/test_mobilenetv2.py >"$LOGS/resnet50-tests.log" 2>&1
      say "== resnet50 gpu tests: $(tail -1 "$LOGS/resnet50-tests.log")"
      grep -E '^(FAILED|ERROR)|max relative error' "$LOGS/resnet50-tests.log" | head -20 | tee -a "$SUMMARY" ;;
    resnet50)  # the default sweep, its phase-range times, the whole (trimmed) run as a tar
      STUDY=resnet50 sweep resnet50 ${RESNET_ARGS:-}; keep resnet50
      python3 -m variants.resnet50.phase_times "$(cat "$LOGS/run-resnet50.path")" 2>&1 | tee -a "$SUMMARY"
      tar -C "$KEEP" -cJf "$OUT/resnet50-run.tar.xz" resnet50 resnet50.json resnet50-report.html 2>/dev/null ;;
    resnet50-steps)  # the fusion steps alone, again: the spread of the staged table
      STUDY=resnet50 sweep resnet50-steps ${RESNET_ARGS:-} --stages unfused,bn_folded,fuse_res3,fuse_all
      python3 -m variants.resnet50.phase_times "$(cat "$LOGS/run-resnet50-steps.path")" 2>&1 | head -8 | tee -a "$SUMMARY" ;;
    resnet50-torch2048)  # PyTorch's stage at batch 2048: peak memory of one forward
      python3 -m variants.resnet50.torch_memory 2048 2>&1 | tail -5 | tee -a "$SUMMARY" ;;
    resnet50-gemm)  # the fused GEMM against cuBLAS on the tail shapes
      python3 -m variants.resnet50.gemm_speed --batch 256 2>&1 | tee "$LOGS/resnet50-gemm.log" | tee -a "$SUMMARY" ;;
    resnet50-2048)  # the case's batch: does it fit (peak device memory sampled every 0.5 s)
      nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits -lms 500 \
        >"$LOGS/resnet50-2048-memory.log" 2>&1 & smi=$!
      STUDY=resnet50 sweep resnet50-2048 --batch 2048 --items 2048 --repeat 3 --warmup 1 \
        --stages "${RESNET2048_STAGES:-torch_gpu,fuse_res3}"
      kill "$smi" 2>/dev/null
      say "peak device memory (MiB used, total): $(sort -n "$LOGS/resnet50-2048-memory.log" | tail -1)"
      keep resnet50-2048 ;;
    mobilenetv2-batch)  # batch 1 is launch-bound: graph against torch eager and torch's graph
      STUDY=mobilenetv2 sweep mobilenetv2-batch --backend none \
        --stages torch_gpu,torch_graph,tuned,graph --batch-sizes 1,32,256
      keep mobilenetv2-batch ;;
    lenet-batch)
      sweep lenet-batch --backend none --items 4096 --repeat 3 --warmup 1 \
        --stages torch_pinned,torch_compile,jax_gpu,one_kernel,graph_fp32,uint8_input,graph \
        --batch-sizes 1,16,256,4096
      keep lenet-batch ;;
    serve-lenet) serve serve-lenet lenet --stage uint8_input --concurrency 1,16,64,256,1024,2048 \
      --max-batch 256,1024 --max-wait-us 0 --streams 1,2 --graphs on --slo-ms 1 \
      --duration-s 1 --warmup-s 0.3 ;;
    serve-mobilenetv2) serve serve-mobilenetv2 mobilenetv2 --stage graph --concurrency 1,4,16 \
      --max-batch 16 --max-wait-us 200 --slo-ms 50 --duration-s 1 --warmup-s 0.3 ;;
    old)  # the earlier commit's code: its own cwd, so its workers import it, not this tree's
      t0=$(date +%s)
      (cd .old && python3 profgen_old.py sweep lenet --out "../$RUNS/old") >"$LOGS/sweep-old.log" 2>&1
      say "== sweep old (.old): exit $?, $(( $(date +%s) - t0 )) s wall"
      tail -16 "$LOGS/sweep-old.log" | tee -a "$SUMMARY" ;;
    pack)  # last, outside any timeout: what the session produced, back under $OUT
      tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" . 2>/dev/null
      tar -C "$KEEP" -cJf "$OUT/keep.tar.xz" . 2>/dev/null
      ls -la "$OUT" | tee -a "$SUMMARY" ;;
  esac
done
