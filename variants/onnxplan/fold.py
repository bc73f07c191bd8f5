"""BatchNormalization folded into the convolution before it: a choice a stage makes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from variants.onnxplan.plan import Layer, Plan


def fold_scale(layer: Layer) -> tuple[np.ndarray, np.ndarray]:
    """(per-channel scale, shift) a BatchNormalization layer applies, in float64."""
    p = {k: v.astype(np.float64) for k, v in layer.params.items()}
    scale = p["scale"] / np.sqrt(p["var"] + layer.attrs["epsilon"])
    return scale, p["bias"] - p["mean"] * scale


def fold_batchnorm(plan: Plan) -> Plan:
    """`plan` with every BatchNormalization whose input is a Conv's output read by nothing
    else folded into that Conv (weights scaled, bias shifted, in float64 then rounded to
    float32). Other BatchNormalization layers stay."""
    readers: dict[str, int] = {}
    for layer in plan.layers:
        for name in layer.inputs:
            readers[name] = readers.get(name, 0) + 1
    layers = list(plan.layers)
    producer = {ly.output: i for i, ly in enumerate(layers)}
    drop: set[int] = set()
    for index, layer in enumerate(layers):
        if layer.op != "BatchNormalization":
            continue
        src = producer.get(layer.inputs[0])
        if src is None or layers[src].op != "Conv" or readers[layer.inputs[0]] != 1:
            continue
        conv = layers[src]
        scale, shift = fold_scale(layer)
        weight = conv.params["weight"].astype(np.float64) * scale[:, None, None, None]
        bias = conv.params["bias"].astype(np.float64) * scale + shift
        params = {"weight": weight.astype(np.float32), "bias": bias.astype(np.float32)}
        layers[src] = replace(conv, params=params, output=layer.output)
        drop.add(index)
    kept = [ly for i, ly in enumerate(layers) if i not in drop]
    return replace(plan, layers=tuple(kept))
