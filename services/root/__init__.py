"""The composition root: the one place that builds the parts from the settings (container.py)."""
