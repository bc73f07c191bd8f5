"""Export torchvision's mobilenet_v2 (random initialisation: no weights are downloaded) to ONNX
as a user would, for `profgen sweep mobilenetv2 --onnx`: eval mode, opset 17, a dynamic batch
axis. Tries the TorchScript exporter first (torchvision-style node names), then dynamo.

    python scripts/export_torchvision.py OUT.onnx
"""

from __future__ import annotations

import sys

import torch
import torchvision


def main() -> None:
    out = sys.argv[1]
    torch.manual_seed(0)
    net = torchvision.models.mobilenet_v2(weights=None).eval()
    x = torch.randn(2, 3, 224, 224)
    kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"],
                  dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    try:
        torch.onnx.export(net, x, out, dynamo=False, **kwargs)
        print("exported with the TorchScript exporter:", out)
    except Exception as exc:  # noqa: BLE001 - fall back to the other exporter
        print("TorchScript exporter failed:", exc)
        torch.onnx.export(net, (x,), out, dynamo=True, **kwargs)
        print("exported with the dynamo exporter:", out)


if __name__ == "__main__":
    main()
