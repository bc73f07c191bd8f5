"""The LeNet study's stages, one module per stage; variants/lenet/study.py registers them in
study order. Importing a stage module imports only numpy, profiler.study, profiler.ranges and
the helpers beside it: CuPy and PyTorch are imported inside `prepare` and `infer`.

Private modules: `_cuda` (what every CUDA stage shares), `_layered` (the layer-by-layer
stages batch_parallel through fc_coalesced, configured by class attributes) and `_chunked`
(the overlapped stages: chunks whose number follows the batch, over several streams).
"""
