"""CUDA helpers any study's hand-written kernels can use, through CuPy: compile .cu files
(`build`), move data (`memory`) and launch kernels cheaply (`launch`).

CuPy is imported inside the functions, so importing these modules needs neither CuPy nor a GPU.
Every copy goes through the CUDA runtime calls CuPy wraps, which raise
`cupy.cuda.runtime.CUDARuntimeError` on a failure; a kernel that faults is reported by the next
copy or synchronisation, so a stage that ends its `infer` with one fails loudly.
"""
