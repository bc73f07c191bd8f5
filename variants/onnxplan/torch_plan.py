"""A layer plan as PyTorch modules (imported only where torch is: a framework stage's
`prepare`). Each ONNX node is one module, called in plan order (a tensor is dropped after its
last reader; a Conv without a bias gets none, as torchvision's convolutions); a forward
pre-hook and a forward hook push and pop an NVTX range named after the node's phase (once
around consecutive nodes of one phase), so the profiler lines cuDNN's kernels up with the
plan's layers."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from profiler import ranges
from profiler.errors import DataError
from variants.onnxplan.plan import Layer, Plan


class _Add(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


class _Reshape(nn.Module):
    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.shape = shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(len(x), *self.shape)


def _param(value: np.ndarray) -> nn.Parameter:
    return nn.Parameter(torch.from_numpy(np.array(value, np.float32)),  # a writable copy
                        requires_grad=False)


def _padded(module: nn.Module, pads: tuple[int, ...], value: float = 0.0) -> nn.Module:
    t, left, b, r = pads
    if (t, left) == (b, r):
        return module
    return nn.Sequential(nn.ConstantPad2d((left, r, t, b), value), module)


def module_of(layer: Layer) -> nn.Module:
    """The PyTorch module that computes `layer`. Raises: DataError for what it cannot."""
    a, p = layer.attrs, layer.params
    op = layer.op
    if op == "Conv":
        t, left, b, r = a["pads"]
        sym = (t, left) == (b, r)
        oc, cg, kh, kw = p["weight"].shape
        has_bias = bool(p["bias"].any())  # the ONNX Conv had a bias (the plan fills zeros)
        conv = nn.Conv2d(cg * a["group"], oc, (kh, kw), a["stride"], (t, left) if sym else 0,
                         groups=a["group"], bias=has_bias)
        conv.weight = _param(p["weight"])
        if has_bias:
            conv.bias = _param(p["bias"])
        return conv if sym else _padded(conv, a["pads"])
    if op in ("Clip", "Relu"):
        return nn.ReLU() if op == "Relu" else nn.Hardtanh(a["min"], a["max"])
    if op == "BatchNormalization":
        bn = nn.BatchNorm2d(len(p["scale"]), eps=a["epsilon"])
        bn.weight, bn.bias = _param(p["scale"]), _param(p["bias"])
        bn.running_mean = torch.from_numpy(p["mean"].astype(np.float32))
        bn.running_var = torch.from_numpy(p["var"].astype(np.float32))
        return bn
    if op == "Add" and "bias" not in p:
        return _Add()
    if op == "MaxPool":
        t, left, b, r = a["pads"]
        pool = nn.MaxPool2d(a["kernel"], a["stride"], (t, left) if (t, left) == (b, r) else 0)
        return pool if (t, left) == (b, r) else _padded(pool, a["pads"], float("-inf"))
    if op == "AveragePool" and a["pads"][:2] == a["pads"][2:]:
        return nn.AvgPool2d(a["kernel"], a["stride"], a["pads"][:2],
                            count_include_pad=bool(a["count_include_pad"]))
    if op == "GlobalAveragePool":
        return nn.AdaptiveAvgPool2d(1)
    if op in ("Flatten", "Reshape"):
        return _Reshape(layer.out_shape)
    if op == "Gemm":
        m, k = p["weight"].shape
        linear = nn.Linear(k, m)
        linear.weight, linear.bias = _param(p["weight"]), _param(p["bias"])
        return linear
    raise DataError(f"node {layer.name!r} (op {op}): not built as a PyTorch module")


class PlanModule(nn.Module):
    """The plan's layers as modules, run in order on a table of tensors."""

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan
        self.steps = nn.ModuleList(module_of(ly) for ly in plan.layers)
        last = {name: i for i, ly in enumerate(plan.layers) for name in ly.inputs}
        self._last_read = [tuple(n for n in dict.fromkeys(ly.inputs)
                                 if last[n] == i and n != plan.output)
                           for i, ly in enumerate(plan.layers)]
        phases = [ly.phase for ly in plan.layers]
        for i, module in enumerate(self.steps):  # one range per run of layers of one phase
            if i == 0 or phases[i - 1] != phases[i]:
                module.register_forward_pre_hook(_push(phases[i]))
            if i == len(phases) - 1 or phases[i + 1] != phases[i]:
                module.register_forward_hook(_pop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = {self.plan.input: x}
        for layer, module, done in zip(self.plan.layers, self.steps, self._last_read,
                                       strict=True):
            values[layer.output] = module(*(values[name] for name in layer.inputs))
            for name in done:  # freed after its last reader, as an eager network frees it
                del values[name]
        return values[self.plan.output]


def _push(name: str) -> Any:
    def hook(module: nn.Module, args: Any) -> None:
        ranges.push(name)

    return hook


def _pop(module: nn.Module, args: Any, output: Any) -> None:
    ranges.pop()
