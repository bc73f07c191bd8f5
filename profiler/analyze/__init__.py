"""Analyses: pure functions from DataFrames to DataFrames (never plotly, never jinja2)."""
