"""The fp16 stages on the GPU: time and error with half precision from HALF_FROM (the stages
of the sweep) and from the first layer (every layer in half), and the custom stage against
its CPU twin.

For each variant: median of 10 calls of `infer` on the whole batch (page-locked input for the
CUDA stages, after 3 warm-ups), the largest |logit - reference| / row maximum over the batch
(reference: the study's, onnxruntime) and whether HALF_RULE passes. Then the fp16 stage's
logits of the first 4 images against half_twins.forward, which rounds at the same places:
they differ only where another fp32 summation order rounds to another half.

    python3 scripts/fp16_check.py [--images 256]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def rel(out: np.ndarray, ref: np.ndarray) -> float:
    return float((np.abs(out - ref) / np.abs(ref).max(axis=1, keepdims=True)).max())


def timed(stage, x, repeats=10):
    x = stage.host_input(x) if hasattr(stage, "host_input") else x
    for _ in range(3):
        out = stage.infer(x)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = stage.infer(x)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3, out


def main() -> None:
    from variants.mobilenetv2 import data
    from variants.mobilenetv2.stages.fp16 import HALF_FROM, Fp16
    from variants.mobilenetv2.stages.graph import Graph
    from variants.mobilenetv2.stages.torch_fp16 import TorchFp16
    from variants.mobilenetv2.study import HALF_RULE, load, reference
    from variants.onnxplan import half_twins

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=256)
    count = parser.parse_args().images
    net = load()
    x = data.benchmark_images(count)
    ref = reference(x, net)
    variants = [
        (f"fp16 (half from {HALF_FROM})", Fp16),
        ("fp16, every layer in half", type("Fp16All", (Fp16,), {"half_from": None})),
        (f"torch_fp16 (half from {HALF_FROM})", TorchFp16),
        ("torch_fp16, every layer in half",
         type("TorchFp16All", (TorchFp16,), {"half_from": None})),
        ("graph (fp32)", Graph),
    ]
    print(f"{count} images, ms per call (median of 10), error = max |d| / row max "
          f"({HALF_RULE.describe()})")
    print("| variant | ms | max error | HALF_RULE |")
    print("|---|---|---|---|")
    first4 = None
    for label, cls in variants:
        stage = cls()
        try:
            stage.prepare(net, count)
            ms, out = timed(stage, x)
            verdict = HALF_RULE.check(out, ref)
            print(f"| {label} | {ms:.2f} | {rel(out, ref):.3g} | "
                  f"{'pass' if verdict.passed else 'FAIL'} |", flush=True)
            if cls is Fp16:
                first4 = stage.infer(stage.host_input(x[:4]))
        except Exception as exc:  # noqa: BLE001 - a diagnostic script reports and goes on
            print(f"| {label} | {type(exc).__name__}: {exc} | | |", flush=True)
        finally:
            stage.release()
    if first4 is not None:
        twin = half_twins.forward(net.plan, x[:4], HALF_FROM)
        print(f"fp16 GPU vs CPU twin, 4 images: {rel(first4, twin):.3g}; twin vs reference "
              f"{rel(twin, ref[:4]):.3g}")


if __name__ == "__main__":
    main()
