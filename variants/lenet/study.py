"""The LeNet-5 study: from PyTorch, JAX and a naive per-image CUDA baseline to the whole
network in one kernel, uint8 input and CUDA graphs, on 10,000 handwritten digits. The
registration order below is the study's order."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profiler.study import Compare, Study
from variants.lenet import data, reference
from variants.lenet.model import LeNet, load
from variants.lenet.stages.batch_parallel import BatchParallel
from variants.lenet.stages.conv_opt import ConvOpt
from variants.lenet.stages.cuda_baseline import CudaBaseline
from variants.lenet.stages.fc_coalesced import FcCoalesced
from variants.lenet.stages.fc_opt import FcOpt
from variants.lenet.stages.graph import Graph, GraphFp32
from variants.lenet.stages.jax_gpu import JaxGpu
from variants.lenet.stages.no_sync import NoSync
from variants.lenet.stages.one_kernel import OneKernel, OneKernelConst
from variants.lenet.stages.overlap_fusion import OverlapFusion
from variants.lenet.stages.pinned import Pinned
from variants.lenet.stages.torch_compile import TorchCompile
from variants.lenet.stages.torch_cpu import TorchCpu
from variants.lenet.stages.torch_gpu import TorchGpu
from variants.lenet.stages.torch_pinned import TorchPinned
from variants.lenet.stages.uint8_input import Uint8Input

#: every stage's logits: within 1e-4 of the float64 reference relative to the image's largest
#: logit, and the same top-1 class wherever the two largest logits are not a near tie
LOGITS_RULE = Compare(rtol=1e-4, atol=0.0, scale="row", topk=1, tie_margin=1e-3)


def _inputs(count: int) -> np.ndarray:
    return data.benchmark_images(count)


def _data(path: Path, count: int) -> np.ndarray:
    return data.benchmark_images(count, path)


def _reference(images: np.ndarray, model: LeNet) -> np.ndarray:
    return reference.forward(images, model.weights)


STUDY = Study(
    "lenet",
    title="LeNet-5 on 28x28 handwritten digits",
    unit="images",
    inputs=_inputs,
    data=_data,
    model=load,
    reference=_reference,
    compare=LOGITS_RULE,
    version="1",
    default_items=10_000,
)

STUDY.add(TorchCpu, key="torch_cpu", role="framework", runtime="cpu", needs=("torch",))
STUDY.add(TorchGpu, key="torch_gpu", role="framework", runtime="torch")
STUDY.add(TorchPinned, key="torch_pinned", role="framework", runtime="torch")
STUDY.add(TorchCompile, key="torch_compile", role="framework", runtime="torch")
STUDY.add(JaxGpu, key="jax_gpu", role="framework", runtime="jax", needs=("jax",))
# One profiled repeat is ~90,000 GPU ops and ~200,000 API calls: trace one, not five. Nsight
# Compute replays every launch (7 an image): its metrics pass profiles the first 8 images.
STUDY.add(
    CudaBaseline,
    key="cuda_baseline",
    role="baseline",
    runtime="cupy",
    profiled_repeats=1,
    ncu_items=8,
)
STUDY.add(BatchParallel, key="batch_parallel", runtime="cupy")
STUDY.add(ConvOpt, key="conv_opt", runtime="cupy")
STUDY.add(FcOpt, key="fc_opt", runtime="cupy")
STUDY.add(NoSync, key="no_sync", runtime="cupy")
STUDY.add(Pinned, key="pinned", runtime="cupy")
STUDY.add(FcCoalesced, key="fc_coalesced", runtime="cupy")
STUDY.add(OverlapFusion, key="overlap_fusion", runtime="cupy")
STUDY.add(OneKernel, key="one_kernel", runtime="cupy")
STUDY.add(OneKernelConst, key="one_kernel_const", runtime="cupy")
STUDY.add(GraphFp32, key="graph_fp32", runtime="cupy")
STUDY.add(Uint8Input, key="uint8_input", runtime="cupy")
STUDY.add(Graph, key="graph", runtime="cupy")
