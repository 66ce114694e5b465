"""The enricher and the gateway's catalog matcher share one word normaliser (semantic_enrichment.words):
every form of a verb the enricher writes, and the plural of its object, find the enriched pair."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from semantic_enrichment.lexicon import verb_forms
from semantic_enrichment.offline import MODEL, PROMPT_VERSION, action_entities, tool_terms
from services.gateway.catalog_query.entries import ToolEntry, tool_entry
from services.gateway.catalog_query.matching import Want
from tool_selector.core.models import CreationMethod, ToolEnrichment, ToolRecord

NOW = datetime(2026, 11, 21, tzinfo=UTC)


def _enriched_entry(name: str) -> tuple[ToolEntry, str, str]:
    """The tool as the view keeps it after the offline enricher, with the verb and object it wrote.
    No description, so a match can only come from the pairs or the name."""
    record = ToolRecord(
        server="s",
        name=name,
        content_hash="h",
        creation_method=CreationMethod.IMPORTED,
        created_at=NOW,
        updated_at=NOW,
    )
    terms = tool_terms(record)
    assert terms.verb is not None and terms.entity
    enrichment = ToolEnrichment(
        tool_id=record.id,
        action_entities=action_entities(terms),
        mcp_server_name="s",
        tool_hash="h",
        enrichment_hash="h",
        enricher="offline",
        model=MODEL,
        prompt_version=PROMPT_VERSION,
        last_updated=NOW,
    )
    return tool_entry(record, enrichment), terms.verb, terms.entity


@pytest.mark.parametrize(
    ("name", "one", "many"),
    [
        ("create_issue", "issue", "issues"),
        ("listRepositories", "repository", "repositories"),
        ("delete_branch", "branch", "branches"),
        ("search_files", "file", "files"),
        ("send_emails", "email", "emails"),
        ("copy_boxes", "box", "boxes"),
        ("get_weather_forecast", "weather forecast", "weather forecasts"),
        ("get_user_settings", "user setting", "user settings"),  # a noun that is also a verb form
    ],
)
def test_every_form_of_an_enriched_verb_with_the_plural_object_matches_the_enriched_pair(
    name: str, one: str, many: str
) -> None:
    entry, verb, entity = _enriched_entry(name)
    assert f"{verb} {entity}" in entry.action_entities
    forms = sorted(form for form, canonical in verb_forms().items() if canonical == verb)
    assert len(forms) > 1
    for action in forms:
        for said in (one, many, many.upper()):
            assert Want.of(action, said).score(entry)[1] == "action_entities", (action, said)
