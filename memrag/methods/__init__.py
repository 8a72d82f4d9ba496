"""Retrieval methods. Each module exposes `retrieve(ctx, params) -> Trace`."""
