"""Defaults that more than one module needs, stated once."""

from __future__ import annotations

#: timed repeats and untimed warm-ups of a stage
REPEAT = 10
WARMUP = 2
#: repeats of the profiled pass: 5 lets Mann-Whitney U (4 against 4 at least) judge kernels
PROFILED_REPEATS = 5
#: seconds before a stage's process is stopped and the stage marked TIMEOUT
STAGE_TIMEOUT_S = 600.0
#: the profilers a sweep can run its stages under
BACKENDS = ("cupti", "nsys", "none")
DEFAULT_BACKEND = "cupti"
