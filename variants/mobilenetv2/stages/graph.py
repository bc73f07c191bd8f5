"""The whole forward as one CUDA graph: launch cost at small batch."""

from __future__ import annotations

from variants.onnxplan.fused_stages import GraphStage


class Graph(GraphStage):
    """CUDA graph

    The pinned stage's 55 kernel launches captured once per batch size into a CUDA graph
    and replayed with one launch: the same kernels and page-locked copies, without a host
    launch per kernel, which is what counts at batch 1.
    """
