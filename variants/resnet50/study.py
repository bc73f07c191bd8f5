"""The ResNet-50 study (issue 11): an ONNX ResNet-50 (torchvision's layout, BatchNorm kept as
its own nodes) run phase by phase by CUDA kernels, from every op its own kernel to the
Conv+BN+Add+ReLU tail fused, in res3.2-res3.4 only (the case) and then everywhere, against
PyTorch (cuDNN). The registration order below is the study's order; unfused -> bn_folded ->
fuse_res3 -> fuse_all are the steps of the fusion question, torch_gpu and graph are not.

Every stage but graph enters one NVTX range per phase a forward (`phases`: stem, res{L}.{i}/
conv1, conv2, downsample, tail, head), so a phase's GPU time is its share of the network's.

Every stage gets the images and returns the logits through page-locked host memory (torch_gpu
too), so the copies take the same few milliseconds everywhere and the pageable copy's spread
(+-2% of a forward) does not hide a 1-2% effect; for the same reason a sweep takes the median
of 30 timed repeats unless `--repeat` says otherwise (`default_repeat`).

Default: 256 images in one batch of 256, the setting of the issue's targets: a forward takes
76-111 ms there on the H100 for every stage, so a sweep of all six stages takes 65 s (92 s
with `--repeat 30`; well under the 3 minutes; onnxruntime's CPU reference on 256 images
takes seconds on the device's 16 cores), and the GEMMs' N (the batch's pixels) fills the GPU
even on 7x7 planes.
`--batch 2048` reproduces the case's setting: its activations take about 6.6 GB a buffer, the
Im2Col buffer is capped at 2 GiB (the convolution runs in chunks of images), the fused stages
need none.
"""

from __future__ import annotations

from pathlib import Path

from profiler.study import Study
from variants.mobilenetv2 import data
from variants.mobilenetv2.study import LOGITS_RULE, Network, reference
from variants.onnxplan import plan
from variants.resnet50 import model as builder
from variants.resnet50 import phases
from variants.resnet50.stages.bn_folded import BnFolded
from variants.resnet50.stages.fuse_all import FuseAll
from variants.resnet50.stages.fuse_res3 import FuseRes3
from variants.resnet50.stages.graph import Graph
from variants.resnet50.stages.torch_gpu import TorchGpu
from variants.resnet50.stages.unfused import Unfused


def load(path: Path | None = None) -> Network:
    """The network of the ONNX file at `path` (default: the built, cached ResNet-50), its
    layers named and ordered by phase. Raises: DataError for a file that is not a ResNet."""
    path = Path(path) if path else builder.path()
    return Network(phases.name_phases(plan.load(path)), path)


STUDY = Study(
    "resnet50",
    title="ResNet-50 from ONNX: Conv+BN+Add+ReLU fused block by block",
    unit="images",
    inputs=data.benchmark_images,
    data=lambda path, count: data.benchmark_images(count, path),
    model=load,
    reference=reference,
    compare=LOGITS_RULE,
    version="1",
    default_items=256,
    default_repeat=30,
    reads_model=True,
    model_file=builder.path,
    layers=lambda net: phases.phase_table(net.plan),
)

STUDY.add(TorchGpu, key="torch_gpu", role="framework", runtime="torch", needs=("torch",))
STUDY.add(Unfused, key="unfused", role="baseline", runtime="cupy", ncu_items=8)
STUDY.add(BnFolded, key="bn_folded", runtime="cupy", ncu_items=8)
STUDY.add(FuseRes3, key="fuse_res3", runtime="cupy", ncu_items=8)
STUDY.add(FuseAll, key="fuse_all", runtime="cupy", ncu_items=8)
STUDY.add(Graph, key="graph", runtime="cupy", ncu_items=8)
