"""Copy/compute overlap and kernel fusion: the batch in chunks over several streams, three fused
kernels per chunk."""

from __future__ import annotations

from typing import Any

from variants.cuda import build, launch, memory
from variants.lenet import gpu
from variants.lenet.stages._chunked import ChunkedStage
from variants.lenet.stages._layered import conv_constants, device_weights

CP1_IMGS, CP2_IMGS, FC_IMGS = 8, 4, 16  # images per block of the kernels in fused.cu
KERNELS = ("Conv1_ReLu_Pool1", "Conv2_ReLu_Pool2", "Linear_ReLu_Fused")


class OverlapFusion(ChunkedStage):
    """Copy/compute overlap and kernel fusion

    The batch is split into chunks (one per 1,024 images, at most eight) issued round-robin over
    four streams, so while one chunk's images are copied in the previous chunks compute and
    copy their logits out, and each chunk runs three fused kernels (conv1+ReLU+pool,
    conv2+ReLU+pool, the three fully-connected layers) instead of seven, so the pre-pool maps
    and the hidden vectors never touch device memory: the copy-in is then nearly all that is
    left.
    """

    def allocate(self, model: Any, batch: int) -> None:
        self._module = gpu.compile_module("fused")
        gpu.set_constants(self._module, "fused", conv_constants(model.weights))
        self._k = build.kernels(self._module, KERNELS)
        self._w = device_weights(model.weights, fc_transposed=True)
        self._a = {
            "input": memory.device_empty((batch, 784)),
            "pool1": memory.device_empty((batch, 6 * 12 * 12)),
            "pool2": memory.device_empty((batch, 256)),
            "logits": memory.device_empty((batch, 10)),
        }

    def launches(
        self, start: int, count: int, alone: bool = False
    ) -> list[tuple[str, launch.PackedLaunch]]:
        """The three fused kernels for images start..start+count."""
        ptr = self.row_ptrs(start)
        w, k, m = self._w, self._k, launch.i32(count)
        fc_weights = [w[f"fc{i}.{kind}"] for i in (1, 2, 3) for kind in ("weight", "bias")]
        fc_args = (ptr["pool2"], *fc_weights, ptr["logits"], m)
        conv1_args = (ptr["input"], ptr["pool1"], m)
        conv2_args = (ptr["pool1"], w["conv2.weight_t"], w["conv2.bias"], ptr["pool2"], m)

        def pack(kernel: str, per_block: int, threads: int, args: tuple) -> launch.PackedLaunch:
            return launch.PackedLaunch(k[kernel], launch.grid_for(count, per_block), threads, args)

        return [
            ("conv1_pool1", pack("Conv1_ReLu_Pool1", CP1_IMGS, 256, conv1_args)),
            ("conv2_pool2", pack("Conv2_ReLu_Pool2", CP2_IMGS, 64 * CP2_IMGS, conv2_args)),
            ("fc", pack("Linear_ReLu_Fused", FC_IMGS, 128, fc_args)),
        ]
