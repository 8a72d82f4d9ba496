"""memrag: NeuroPath and EcphoryRAG made visible.

The public entry points are `memrag.index.memory.Memory` (index documents) and
`memrag.ask.ask` (retrieve with one or more methods and answer).
"""

__version__ = "0.1.0"
