"""The MobileNetV2 study: an ONNX MobileNetV2 (torchvision's layout) run layer by layer by
hand-written CUDA kernels against PyTorch (cuDNN) and onnxruntime. `model` builds and caches
the ONNX file, `data` makes the benchmark images, `study` declares the stages."""
