"""Stage 5, route: a resolution and its absolute confidence to one of four tiers (``route``)."""
