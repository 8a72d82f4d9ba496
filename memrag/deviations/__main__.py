"""python -m memrag.deviations: print the README's deviations table."""

from memrag.methods.deviations import markdown_table

print(markdown_table())
