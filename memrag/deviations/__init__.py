"""The old name of memrag.methods.deviations, kept so `python -m memrag.deviations` still prints the table.

A package (not a module file): the table itself lives beside the wings, in memrag/methods/deviations.py.
"""
