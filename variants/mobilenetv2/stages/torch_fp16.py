"""Framework reference in half precision: PyTorch eager with the same layers in fp16 (cuDNN)."""

from __future__ import annotations

from typing import Any

from profiler.errors import DataError
from variants.mobilenetv2.stages.fp16 import HALF_FROM
from variants.mobilenetv2.stages.torch_gpu import TorchGpu


class TorchFp16(TorchGpu):
    """PyTorch eager in fp16 (cuDNN)

    The torch_gpu stage with the same layers as the fp16 stage in half precision (HALF_FROM
    on: the module of every ONNX node from there converted with .half(), its float32 input cast
    to half): cuDNN's fp16 convolutions on the tensor cores with fp32 accumulation, the
    earlier layers in fp32 with TF32 off, the fp16 logits returned as float32.
    """

    half_from: str | None = HALF_FROM

    def prepare(self, model: Any, batch: int) -> None:
        super().prepare(model, batch)
        phases = [ly.phase for ly in model.plan.layers]
        if self.half_from is not None and self.half_from not in phases:
            raise DataError(f"torch_fp16 starts half precision at layer {self.half_from!r}, "
                            "which the plan does not have")
        first = 0 if self.half_from is None else phases.index(self.half_from)
        for module in list(self._net.steps)[first:]:
            module.half()
            module.register_forward_pre_hook(_to_half)


def _to_half(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A forward pre-hook: the module's float32 inputs cast to half (a no-op on half ones)."""
    return tuple(a.half() if a.is_floating_point() else a for a in args)
