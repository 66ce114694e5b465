"""The tool-definition scanner: reads a tool (or a server's instructions) as an attacker wrote it.

Every string of a definition is read: the name, the description, and every key and value of the input
schema, the output schema and the annotations (property names, descriptions, titles, defaults, enums).
Each check is one family of evidence and gives at most one finding, either ``hold`` (enough on its
own) or ``flag`` (a weak signal). Each module's docstring says exactly what it matches.

    check           hold                                       flag
    unicode         invisible, bidi, tag, private-use chars    -
    confusable      -                                          Latin mixed with Cyrillic/Greek look-alikes
    markup          role markers: [SYSTEM: …], <|system|>      <IMPORTANT> blocks, [important]
    override        "ignore previous instructions" (an order)  the same quoted or discussed; role play
    concealment     "do not tell the user", "as if it's"       "silently append", "without their knowledge"
    exfiltration    "exfiltrate"; private data + outside place  a side channel out; a secret into an argument
    encoded         base64/hex/%/\\x decoding to a command     -
    command         -                                          curl … | sh, a reverse shell, rm -rf ~
    secrets         -                                          an order to read ~/.ssh, .env, id_rsa, ...
    shadowing       a claim to be a catalog server's tool      other servers' tools named, imitated, rewired
    hidden-context  -                                          a parameter for the system prompt, history
    annotations     -                                          text under keys MCP does not define
    preference      -                                          "use this rather than other tools"; steering
    approval        -                                          "once approved, it will …"
    favour          -                                          "could you please", "as a courtesy"
    standing-order  -                                          orders for later calls or the model's replies

Issue 27's checks read what words do rather than fixed phrases: ``claims.py`` (a tool that claims to
be, succeed or stand in for another server's tool), ``steering.py`` (preference in other words,
standing orders), ``requests.py`` (favours, concealment and overrides in roundabout words, a script
fetched and run), ``leaks.py`` (private data put where it travels) and the schema-field additions.
Only the first generalised to attacks written apart from the rules (eval/datasets/poison-paraphrases).

The verdict: ``quarantine`` when any finding holds, or when flags come from two or more checks
(independent weak signals that agree: an ``<IMPORTANT>`` block that also reaches for ``~/.ssh``);
``flagged`` on one flag; ``clean`` otherwise; each reason is led by its check's name. Invisible
characters and orders aimed at the model (role markers, overrides, concealment, encoded commands) thus
always quarantine; a single weak signal is shown to the operator but lets the tool through. The rules
are tuned to stay silent on the published catalogs of ``../shared/benchmarks`` (msc_bench_dev,
livemcpbench): phrases that real tools use
("IMPORTANT:", a ``systemPrompt`` parameter that says what it is for, "BCC recipients", "succeed
silently", "ALWAYS use this tool") are not evidence. ``batch.scan_catalog`` adds one rule across a
catalog: the other tools of a server with a quarantined tool or description get a flag.

Rules read words, so a paraphrase they do not know gets through: the scanner is a tripwire in front of
the pins and the operator's review (issue 15), not a proof of safety. docs/operator-guide.md has its
measured detection and false positives, and why a learned classifier was not adopted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel
from pydantic import Field as PydanticField

from tool_selector.trust.claims import check_claims
from tool_selector.trust.encoded import check_clear_commands, check_encoded
from tool_selector.trust.exfiltration import check_exfiltration, check_secrets
from tool_selector.trust.findings import Field, Finding
from tool_selector.trust.hidden_chars import check_confusables, check_hidden_characters
from tool_selector.trust.instructions import (
    check_approval,
    check_concealment,
    check_markup,
    check_override,
    check_preference,
)
from tool_selector.trust.leaks import check_leaks
from tool_selector.trust.requests import check_roundabout
from tool_selector.trust.schema_fields import check_annotations, check_schema_fields
from tool_selector.trust.shadowing import ScanContext, check_shadowing
from tool_selector.trust.steering import check_preference_paraphrase, check_standing_orders

__all__ = [
    "ScanContext",
    "ScanResult",
    "Verdict",
    "read_text_findings",
    "scan_text",
    "scan_tool",
    "server_findings",
    "verdict_of",
]

Verdict = Literal["clean", "flagged", "quarantine"]


class ScanResult(BaseModel):
    """The scanner's verdict on one definition, and why: one short sentence per check, strongest first,
    each led by its check's name ("shadowing: claims to be … 'quotation' in description")."""

    verdict: Verdict
    reasons: list[str] = PydanticField(default_factory=list)

    @property
    def held(self) -> bool:
        return self.verdict == "quarantine"


def _orders(field: Field) -> list[Finding]:
    """The checks that read a text as orders to the model (also run on decoded payloads)."""
    return [
        *check_markup(field),
        *check_override(field),
        *check_concealment(field),
        *check_exfiltration(field),
    ]


def _read(field: Field, server: str = "") -> list[Finding]:
    return [
        *_orders(field),
        *check_encoded(field, _orders),
        *check_clear_commands(field),
        *check_secrets(field),
        *check_preference(field),
        *check_approval(field),
        *check_roundabout(field),
        *check_leaks(field),
        *check_preference_paraphrase(server, field),
        *check_standing_orders(field),
    ]


def _unicode(*fields: Field) -> list[Finding]:
    hidden: list[Finding] = []
    confusable: list[Finding] = []
    for field in fields:
        for part, raw in field.suspect_pieces():
            hidden = hidden or check_hidden_characters(field.where_of(part), raw)
            confusable = confusable or check_confusables(field.where_of(part), raw)
    return hidden + confusable


def verdict_of(findings: list[Finding]) -> ScanResult:
    """One finding per check (the strongest), then the rule of the module docstring."""
    by_check: dict[str, Finding] = {}
    for finding in findings:
        kept = by_check.get(finding.check)
        if kept is None or (kept.strength == "flag" and finding.strength == "hold"):
            by_check[finding.check] = finding
    kept_findings = sorted(by_check.values(), key=lambda f: f.strength != "hold")
    holds = sum(f.strength == "hold" for f in kept_findings)
    verdict: Verdict = "clean"
    if holds or len(kept_findings) >= 2:
        verdict = "quarantine"
    elif kept_findings:
        verdict = "flagged"
    return ScanResult(verdict=verdict, reasons=[f"{f.check}: {f.reason}" for f in kept_findings])


def _parameter_names(schema: Mapping[str, Any] | None) -> set[str]:
    properties = (schema or {}).get("properties")
    return {str(k) for k in properties} if isinstance(properties, Mapping) else set()


def tool_findings(
    server: str,
    name: str,
    description: str,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    annotations: Mapping[str, Any] | None = None,
    *,
    context: ScanContext | None = None,
) -> list[Finding]:
    """Every finding on one tool definition (``scan_tool`` turns them into a verdict)."""
    body = Field()
    body.add("description", description or "")
    body.add_json("input_schema", input_schema)
    body.add_json("output_schema", output_schema)
    body.add_json("annotations", annotations)
    findings = _unicode(Field.of_text("name", name), body)
    if body.text:
        findings += _read(body, server)
    findings += check_schema_fields(input_schema, f"{name} {description}")
    findings += check_annotations(annotations)
    own = {name} | _parameter_names(input_schema)
    context = context or ScanContext.empty()
    findings += check_shadowing(server, name, body, own, context)
    findings += check_claims(server, body, own, context)
    return findings


def scan_tool(
    server: str,
    name: str,
    description: str,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    annotations: Mapping[str, Any] | None = None,
    *,
    context: ScanContext | None = None,
) -> ScanResult:
    """The verdict on one tool definition; ``context``: the catalog's names, for the shadowing check."""
    return verdict_of(
        tool_findings(server, name, description, input_schema, output_schema, annotations, context=context)
    )


def server_findings(
    server: str, description: str, metadata: Mapping[str, Any], *, context: ScanContext | None = None
) -> list[Finding]:
    """Every finding on the text a server shows agents: its description and every key and string of
    its metadata (keywords, categories, steering, ...), read as a tool's description is read."""
    body = Field()
    body.add("description", description or "")
    body.add_json("metadata", dict(metadata))
    findings = _unicode(body)
    if body.text:
        findings += _read(body)
    context = context or ScanContext.empty()
    findings += check_shadowing(server, "", body, set(), context)
    if description:
        findings += check_claims(server, Field.of_text("description", description), set(), context)
    return findings


def read_text_findings(text: str, *, field: str = "instructions") -> list[Finding]:
    """Every finding of the rules on free text shown to the model (``scan_text`` turns them into a
    verdict)."""
    read = Field.of_text(field, text)
    rewiring = check_shadowing("", "", read, set(), ScanContext.empty())  # no catalog: phrases only
    return _unicode(read) + _read(read) + rewiring


def scan_text(text: str, *, field: str = "instructions") -> ScanResult:
    """The verdict on free text shown to the model: a server's description or instructions."""
    return verdict_of(read_text_findings(text, field=field))
