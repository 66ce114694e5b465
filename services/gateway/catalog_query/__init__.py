"""Use case: structured queries over the catalog (the gateway's ``catalog_query`` tool).

An agent checks the catalog before it acts: which servers cover a domain, which tools of a server
create an issue, whether a server can delete a branch, what a server's profile says.

    view.CatalogView.load(store)        one snapshot of servers, tools, profiles, enrichments, discovery
    view.query(query_type, filters)     servers | tools | check_tool | profile -> a JSON-ready dict

The view is built once and answers from memory (no database reads per query); rebuild it when
``store.catalog_hash()`` differs from ``view.catalog_hash`` (``view.is_current(store)`` checks that
and the discovery states, which the hash does not cover). Agents always see a tool's original
description, never the enriched text.

    filters     the query types and their filters, checked
    entries     each server and tool with its text pre-normalised for matching
    matching    which servers and tools match, and how well
    messages    what each answer tells the agent to do next
    view        the snapshot and its answers

Words are normalised by ``semantic_enrichment.words``, the forms the enricher writes. The benchmark
is ``eval.bench.catalog_query``.
"""
