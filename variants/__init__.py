"""The studies profgen runs: one package per model, one module per stage."""
