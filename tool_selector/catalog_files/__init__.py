"""Catalog files and import batches, read and checked before anything is stored: a catalog folder
(``folder.py``: servers.json + tools.json) and the batch formats (``batch.py``: catalog JSON, CSV,
mcpServers). Parsers only: no SQL, no store; the write path hands what they return to the catalog
writer."""
