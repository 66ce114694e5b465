"""Stage 4, resolve: a query to ranked tools and powers with their evidence and an absolute confidence
(``Resolver.resolve``): weighted hybrid search, the learned ranker, and the fitted confidence."""
