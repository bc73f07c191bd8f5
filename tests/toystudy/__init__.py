"""A CPU-only study for end-to-end tests of the sweep: the LeNet model with stages that run the
float64 reference (PASS) or permute its logits (FAIL). Loaded through $PROFGEN_MODELS."""

from variants.registry import ModelSpec

SPEC = ModelSpec(
    name="toy",
    title="CPU-only toy study",
    stage_package="toystudy",
    stage_keys=("ref", "wrong"),
    loader="variants.lenet.model:load",
)
