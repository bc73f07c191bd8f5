"""Rendering: figures (DataFrame -> plotly Figure), the report context, the HTML report."""
