"""The old name of memrag.explain.deviations, kept so `python -m memrag.deviations` still prints the table.

A package (not a module file) so that git sees memrag/deviations.py as moved to explain/.
"""
