"""The packaged confidence calibration (data: ``confidence-v2.json`` and its evidence)."""
