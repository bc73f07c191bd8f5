"""Print a MobileNetV2 run's per-kind and per-layer tables (the per-layer report's pieces,
until the report renders them): GPU time per op kind per stage, and the slowest layers of a
stage against torch_gpu (cuDNN) from the run's NVTX ranges.

    python scripts/layer_tables.py RUN_DIR [--stage KEY] [--top 10] [--onnx PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from variants.mobilenetv2.study import load
from variants.onnxplan import layers


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    p.add_argument("--stage", help="the custom stage to set against torch_gpu (default: the "
                   "fastest step with a range per layer)")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--onnx", type=Path, help="the model file the run used (default: built)")
    args = p.parse_args()
    ranges = pd.read_csv(args.run / "ranges.csv")
    stages = pd.read_csv(args.run / "stages.csv")
    batch = json.loads((args.run / "run.json").read_text())["settings"]["items"]
    plan = load(args.onnx).plan
    gpu = [s for s in stages["stage"] if s in set(ranges["stage"]) and s != "ort_cpu"]
    pd.set_option("display.width", 200)
    print(f"GPU ms per forward of {batch} images, by op kind (NVTX ranges, profiled pass)")
    print(layers.by_kind(ranges, plan, gpu).round(3).to_string())
    per_layer = set(ranges.loc[ranges["name"].isin(set(layers.group_of(plan))), "stage"])
    steps = stages[(stages["role"] == "step") & (stages["status"] == "PASS")
                   & stages["stage"].isin(per_layer)]  # a CUDA graph has one range
    stage = args.stage or steps.sort_values("median_ns")["stage"].iloc[0]
    table = layers.versus(ranges, plan, stage, "torch_gpu", batch)
    print(f"\n{stage} against torch_gpu (cuDNN), slowest {args.top} layers of {len(table)}")
    cols = ["kind", "shape", "stage_us", "reference_us", "ratio", "gflops", "gbps"]
    print(table[cols].head(args.top).round(2).to_string())
    total = table[["stage_us", "reference_us"]].sum()
    print(f"all layers: {total['stage_us']:.0f} us against {total['reference_us']:.0f} us")


if __name__ == "__main__":
    main()
