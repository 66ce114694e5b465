"""The embedded search backend: a folder on disk, no server."""
