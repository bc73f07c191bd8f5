"""The whole forward as one CUDA graph."""

from __future__ import annotations

from variants.onnxplan.gemm_stages import FusedGemmGraphStage


class Graph(FusedGemmGraphStage):
    """CUDA graph

    The fuse_all stage's launches (53 fused GEMMs, the max pool, the average pool and the
    classifier) captured once per batch size into a CUDA graph and replayed with one launch:
    the same kernels and page-locked copies, without a host launch per kernel.
    """
