"""profgen: run a staged CUDA optimisation study under a profiler and report it.

Data flows one way: variants -> collect -> parse -> analyze -> store -> render.
Nothing happens at import time.
"""

__version__ = "0.1.0"
