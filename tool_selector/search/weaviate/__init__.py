"""The Weaviate search backend (weaviate-client v4), and its layout and retries in plain Python."""
