"""Pins and quarantine entries: the records of what was approved and what is held."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

TrustMode = Literal["pin", "tofu", "hold"]
"""How one write treats definitions that are not pinned yet: ``pin`` approves them (the actor said so),
``tofu`` pins them when their server has no pins yet (trust on first use) and holds them otherwise,
``hold`` holds them for a person's approval."""

TrustPolicy = Literal["tofu", "approve"]
EntryKind = Literal["changed", "new", "flagged"]
EntryState = Literal["pending", "approved", "rejected", "superseded"]
FoundBy = Literal["sync", "activation", "registration", "import", "cli"]


class Pin(BaseModel):
    """An approved tool definition: name, description, input and output schema, annotations."""

    tool_id: str
    server: str
    name: str
    pin_hash: str
    definition: dict[str, Any]
    how: str = Field(description="first use, approved, import, upgrade")
    approved_by: str
    approved_at: datetime


class QuarantineEntry(BaseModel):
    """One held definition of one tool, and what became of it."""

    id: str = Field(description="q-<10 hex>: the same tool and definition always get the same id")
    subject: Literal["tool", "server"] = Field(
        default="tool",
        description="tool: a tool definition; server: a server's shown text (description and metadata), "
        "tool_id then being the server's name",
    )
    tool_id: str
    server: str
    name: str
    kind: EntryKind = Field(
        description="changed: differs from its approved definition; new: never approved (approval policy, "
        "or a tool that appeared on a server whose tools were approved); flagged: the scanner held it"
    )
    state: EntryState
    old_hash: str | None = None
    old_definition: dict[str, Any] | None = None
    new_hash: str
    new_definition: dict[str, Any]
    reasons: list[str] = Field(default_factory=list)
    found_by: FoundBy
    found_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None


class VetSummary(BaseModel):
    """What vetting one write did."""

    pinned: int = 0
    held: list[str] = Field(default_factory=list, description="tool ids held by this write")
    flagged: list[str] = Field(
        default_factory=list, description="tool ids the scanner flagged but let through"
    )

    def add(self, other: VetSummary) -> None:
        self.pinned += other.pinned
        self.held += other.held
        self.flagged += other.flagged
