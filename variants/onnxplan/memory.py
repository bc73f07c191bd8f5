"""Activation buffers for a plan: which tensors can share one, so a stage allocates a few
buffers of the largest activation instead of one per layer."""

from __future__ import annotations

import math

from variants.onnxplan.plan import Plan

#: ops whose output is their input seen with another shape (no copy, no kernel)
VIEWS = ("Flatten", "Reshape")


def slots(plan: Plan) -> tuple[dict[str, int], int]:
    """({tensor: buffer index}, number of buffers). A tensor takes a free buffer when it is
    written and frees it after its last reader; a view shares its input's buffer. Buffers are
    all as large as the largest activation."""
    last: dict[str, int] = {}
    for index, layer in enumerate(plan.layers):
        for name in layer.inputs:
            last[name] = index
    where = {plan.input: 0}
    holders = {0: 1}  # buffer -> tensors alive in it
    free: list[int] = []
    count = 1
    for index, layer in enumerate(plan.layers):
        if layer.op in VIEWS:
            where[layer.output] = where[layer.inputs[0]]
            holders[where[layer.output]] += 1
        else:
            slot = free.pop() if free else count
            count = max(count, slot + 1)
            where[layer.output] = slot
            holders[slot] = holders.get(slot, 0) + 1
        for name in set(layer.inputs):
            if last[name] == index and name != plan.output:
                slot = where[name]
                holders[slot] -= 1
                if holders[slot] == 0:
                    free.append(slot)
    return where, count


def largest(plan: Plan) -> int:
    """Values per item of the largest activation, the input included."""
    return max(math.prod(s) for s in plan.shapes().values())
