"""Stage 3's and 4's embedders behind one protocol, and query embeddings batched across requests."""
