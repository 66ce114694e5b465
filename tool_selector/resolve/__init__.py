"""Stage 4, resolve: a query to ranked tools and powers with their evidence (``Resolver.resolve``)."""
