"""Stage 3, index: the catalog's tool and server documents, embedded and written to the search backend
(``index_catalog``)."""
