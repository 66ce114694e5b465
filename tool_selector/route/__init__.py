"""Stage 5, route: a resolution to one of four tiers in the design's response shapes, with the steps of a
multi-step request (``route``)."""
