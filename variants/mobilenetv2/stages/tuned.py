"""The specialised kernels, tuned where the first H100 sweep's per-layer table pointed."""

from __future__ import annotations

from variants.onnxplan.fused_stages import TunedStage


class Tuned(TunedStage):
    """Tuned kernels

    The specialised stage with its three slowest kinds of kernel replaced, as the first
    H100 sweep's per-layer table against cuDNN showed them: the 1x1 SGEMM's threads own
    pixels 16 apart, so a warp's loads and stores touch consecutive floats (its stores were
    16 bytes apart across threads); the 3x3 depthwise convolutions run one thread per output
    straight from global memory, without idle threads on the 14x14 and 7x7 planes; the
    3-channel stem reads each pixel's 27 taps once and writes all 32 output channels (the
    generic kernel read them once per channel).
    """
