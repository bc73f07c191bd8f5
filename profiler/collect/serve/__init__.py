"""`profgen serve`: a stage served under load (the server loop, its load generators, the
engines that run batches, the worker process and its parent side)."""
