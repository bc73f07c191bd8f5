"""The MobileNetV2 study's stages, one module per stage; variants/mobilenetv2/study.py
registers them in study order. Frameworks and CuPy are imported inside `prepare` and `infer`."""
