"""The catalog: the embedded database that is the source of truth (its readers of files are
``tool_selector/catalog_files``)."""
