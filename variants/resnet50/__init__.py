"""The ResNet-50 study's own parts (issue 11): so far the model builder. It shares the ONNX
layer-plan engine (variants/onnxplan) and the images of the MobileNetV2 study."""
