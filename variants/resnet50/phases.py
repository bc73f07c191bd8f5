"""ResNet-50's phases: the study's names for groups of layers, found from the graph's structure.

`name_phases(plan)` gives every layer of a bottleneck ResNet (torchvision's layout, BatchNorm
kept or folded, any node names) its phase and puts the layers of each phase next to each
other, so that a stage enters each phase's range once per forward:

- `stem`: everything up to the first MaxPool (conv1, bn1, relu, maxpool);
- `res{L}.{i}/{part}` for bottleneck i (from 1) of layer L (2..5, torchvision's layer1..4):
  `conv1` and `conv2` (the convolution, its BatchNorm and ReLU), `downsample` (the projection
  convolution and its BatchNorm, a layer's first block only) and `tail` (conv3, bn3, the
  residual Add and the last ReLU);
- `head`: everything after the last block (avgpool, flatten, fc).

Blocks end at their residual Add and the ReLU reading it; a block with a downsample starts a
new layer L. Inside a block the order becomes conv1, conv2, downsample, tail: torchvision
runs the downsample after conv3, which would split the tail's range in two; the downsample
reads only the block's input, so moving it first changes no result. Found from the structure,
not the names, the phases of a user's torchvision export (`/layer1/layer1.0/conv1/Conv`,
or the dynamo exporter's names) are the same as those of the study's own model.
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import groupby
from operator import attrgetter

import pandas as pd

from profiler.errors import DataError
from variants.onnxplan.plan import Layer, Plan

PARTS = ("conv1", "conv2", "downsample", "tail")


def name_phases(plan: Plan) -> Plan:
    """`plan` with the ResNet phases above and each block's layers in phase order.

    Raises: DataError naming the plan when it is not a bottleneck ResNet (no MaxPool stem, a
    block without three convolutions on its main path)."""
    layers = list(plan.layers)
    pool = next((i for i, ly in enumerate(layers) if ly.op == "MaxPool"), None)
    if pool is None:
        raise _not_resnet(plan, "no MaxPool ends a stem")
    out = [replace(ly, phase="stem") for ly in layers[: pool + 1]]
    start, stage, index = pool + 1, 1, 0
    while True:
        end = _block_end(layers, start)
        if end is None:
            break
        block = layers[start:end]
        parts = _parts(block, layers[start - 1].output if start else plan.input, plan)
        if "downsample" in parts.values():
            stage, index = stage + 1, 0
        index += 1
        for part in PARTS:
            out.extend(replace(ly, phase=f"res{stage}.{index}/{part}") for ly in block
                       if parts[ly.name] == part)
        start = end
    if stage == 1:
        raise _not_resnet(plan, "no residual block after the stem")
    out.extend(replace(ly, phase="head") for ly in layers[start:])
    return replace(plan, layers=tuple(out))


def _not_resnet(plan: Plan, why: str) -> DataError:
    return DataError(f"{plan.source or 'the model'}: not a bottleneck ResNet ({why}); the "
                     "resnet50 study names its phases from torchvision's ResNet layout")


def _block_end(layers: list[Layer], start: int) -> int | None:
    """Index after the block starting at `start`: its residual Add and the ReLU reading it."""
    for i in range(start, len(layers)):
        if layers[i].op == "Add":
            after = i + 1
            if after < len(layers) and layers[after].op in ("Relu", "Clip") \
                    and layers[after].inputs[0] == layers[i].output:
                after += 1
            return after
    return None


def _parts(block: list[Layer], block_in: str, plan: Plan) -> dict[str, str]:
    """Layer name -> part, for one bottleneck's layers."""
    producer = {ly.output: ly for ly in block}
    add = next(ly for ly in block if ly.op == "Add")
    downsample = None
    for tensor in add.inputs:
        conv = _conv_behind(tensor, producer)
        if conv is not None and conv.inputs[0] == block_in:
            downsample = conv
    main = [ly for ly in block if ly.op == "Conv" and ly is not downsample]
    if len(main) != 3:
        raise _not_resnet(plan, f"the block ending at node {add.name!r} has {len(main)} "
                                "convolutions on its main path, not 3")
    part: dict[str, str] = {}
    own = dict(zip((c.name for c in main), ("conv1", "conv2", "tail"), strict=True))
    if downsample is not None:
        own[downsample.name] = "downsample"
    for layer in block:
        if layer.name in own:
            part[layer.name] = own[layer.name]
        elif layer.op == "Add":
            part[layer.name] = "tail"
        else:  # a BatchNorm or ReLU: the part of what it reads
            src = producer.get(layer.inputs[0])
            part[layer.name] = part[src.name] if src is not None else "conv1"
    return part


def _conv_behind(tensor: str, producer: dict[str, Layer]) -> Layer | None:
    """The Conv whose output reaches `tensor` through BatchNormalization layers only."""
    layer = producer.get(tensor)
    while layer is not None and layer.op == "BatchNormalization":
        layer = producer.get(layer.inputs[0])
    return layer if layer is not None and layer.op == "Conv" else None


def phase_table(plan: Plan) -> pd.DataFrame:
    """The plan's phases as a run's `layers` table (`profiler.schema.LAYERS`), one row per
    phase range: the op and kind of its first convolution (else its first layer), the shapes
    of its input and output, FLOPs summed over its layers, activation bytes it must read
    (tensors from outside the phase) and write (its output) per item, and its weights."""
    from profiler import schema
    from variants.onnxplan import layers as facts

    rows = []
    for phase, group in groupby(plan.layers, key=attrgetter("phase")):
        members = list(group)
        lead = next((ly for ly in members if ly.op in ("Conv", "Gemm")), members[0])
        made = {ly.output for ly in members}
        read = {(t, s) for ly in members for t, s in zip(ly.inputs, ly.in_shapes, strict=True)
                if t not in made}
        rows.append({
            "node": phase,
            "op": lead.op,
            "kind": facts.kind_of(lead),
            "in_shape": "x".join(map(str, members[0].in_shape)),
            "out_shape": "x".join(map(str, members[-1].out_shape)),
            "flops": sum(facts.flops(ly) for ly in members),
            "bytes": 4 * (sum(math.prod(s) for _, s in read) + math.prod(members[-1].out_shape)),
            "weight_bytes": 4 * sum(p.size for ly in members for p in ly.params.values()),
        })
    return schema.conform(pd.DataFrame(rows), schema.LAYERS)
