"""The ONNX layer-plan engine the network studies share (MobileNetV2, ResNet-50).

`plan.load(path)` turns an ONNX graph into a `Plan`: its compute nodes in order, each with its
per-item input and output shapes, its weights as float32 arrays and a phase name taken from the
node's name. `fold.fold_batchnorm(plan)` folds each BatchNormalization that follows a Conv into
it (a stage chooses). `execute.run(plan, x)` is a NumPy executor of a plan, float64 by default:
the reference on a few items and a tool for tests; its per-op functions can be swapped for a
kernel's NumPy twin. `memory.slots(plan)` assigns activations to reusable buffers.

Only NumPy and onnx are imported; no framework, no GPU.
"""
