"""The learned ranker: its features and its exported trees, scored with numpy (``RankerModel``)."""
