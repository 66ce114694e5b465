"""The read use case: one read path (``read_path.ReadPath.decide``) from a query to its candidates and its
whole decision, over a snapshot of the current index."""
