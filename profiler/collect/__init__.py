"""Collection: the only code of profgen that starts a process or turns CUPTI on.

- `runner.collect_stage(job, raw_dir)`: run one stage in its own worker process (timed pass,
  correctness, profiled pass) under the chosen backend and return a `StageOutcome`.
- `worker`: `python -m profiler.collect.worker ...`, the process that runs one stage.
- `cupti`: the in-process activity tracer (NVIDIA's cupti-python).
- `nsys`, `ncu`: finding Nsight Systems / Nsight Compute and building their command lines.
- `tools.run_tool`: the one way an external tool is run (log file, timeout, error context).
- `env`: machine information, `require_cuda()` and `doctor()`.
- `ceilings`: measured copy bandwidths and FP32 rate of this machine.

Nothing here probes the machine at import time.
"""
