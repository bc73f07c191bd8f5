"""Coalesced fully-connected access: weights stored transposed so a warp reads consecutive
addresses.

Test-only switch: with `PROFGEN_TEST_UNCOALESCED_FC=1` in the environment this stage uses the
uncoalesced (out, in) layout of `fc_opt` instead, so one kernel really grows. It exists to record
the regression pair that tests `profgen compare` (see tests/data/runs/regress-pair/README.md);
never set it otherwise.
"""

from __future__ import annotations

import os

from variants.lenet.stages._layered import LayeredStage

UNCOALESCED_SWITCH = "PROFGEN_TEST_UNCOALESCED_FC"


class FcCoalesced(LayeredStage):
    """Coalesced fully-connected access

    The fully-connected weights are uploaded transposed, (in, out), so the 32 threads of a warp,
    one neuron each, read 32 consecutive floats (one 128-byte line) instead of 32 floats a whole
    weight row apart: fc1's kernel drops from about 0.11 to 0.04 ms, a few percent of a call
    that is now mostly the input copy.
    """

    conv_kernels = "specialised"
    fc_kernels = "coalesced"
    sync_each = False
    pinned = True

    def __init__(self) -> None:
        super().__init__()
        if os.environ.get(UNCOALESCED_SWITCH) == "1":
            self.fc_kernels = "specialised"
