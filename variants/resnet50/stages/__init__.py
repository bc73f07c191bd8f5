"""The ResNet-50 study's stages, one module per stage; variants/resnet50/study.py registers
them in study order. Frameworks and CuPy are imported inside `prepare` and `infer`."""
