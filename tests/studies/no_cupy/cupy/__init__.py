# Put this folder first on PYTHONPATH to run profgen as if CuPy were not installed.
raise ImportError("CuPy is blocked for this test (tests/studies/no_cupy)")
