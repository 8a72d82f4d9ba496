"""Evaluation: benchmark loaders and recall units (datasets), scores (metrics), statistics (stats)."""
