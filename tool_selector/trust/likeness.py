"""Shadowing judged by the catalog: a tool that copies a configured server's tool, or that is close to one
in meaning and speaks of doing its job better or in its place (issue 39).

The scanner's shadowing and claim checks (shadowing.py, claims.py) read words; a paraphrase ("the older
differ bundled with the git power has known bugs; assistants get more accurate results by routing git
diff requests here") passed them. Here each new or changed tool is compared with the tools of the
*other configured servers* (the sync's servers) by the embedding model's vectors and by its words:

- **copy**: the tool's text holds at least ``copy_share`` of a configured tool's description (its
  3-word shingles; descriptions of at least ``copy_min_shingles``); or holds all of a shorter one and
  means the same (cosine of name and description >= ``short_copy_from``);
- **same meaning**: its name and description mean what a configured tool's do (cosine >=
  ``same_meaning_from``: above every pair of real servers measured, forks included);
- **claim**: it is close in meaning to a configured tool (cosine >= ``near_from``) and one of its
  sentences (description and every string of its schemas and annotations) reads as a claim to do that
  job better or in another's place: a logistic regression over the sentence's words and word pairs,
  fitted by ``lab shadow-fit`` on written claims against every sentence of the real catalogs
  (tool_selector/calibration/shadow-v1.json, with its provenance and figures). Learned words, because
  they were measured to separate claims far better than the sentence's vector from this model: 13 of
  16 written claims against 3 of 16, each at most 0.5 % of any real catalog's tools held.

Each is a ``hold`` finding of the shadowing check naming the configured tool. The same server configured
twice (every tool the same) is not a copy (routing answers it: route/tiers.py). The vectors are the
shipped relevance model's, whatever model the search uses: the thresholds were measured on its vectors.
Measured figures: docs/operator-guide.md (The scanner, Shadowing by meaning).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tool_selector.core.errors import ConfigurationError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.learned import read_model_file
from tool_selector.core.models import ToolSpec
from tool_selector.trust.findings import Finding, prepare, quote
from tool_selector.trust.names import split_name

MODEL_FILE = "shadow-v1.json"  # tool_selector/calibration/: eval/fitting/shadow_fit.py writes it
FORMAT: Literal["tool-selector-shadow/1"] = "tool-selector-shadow/1"
TEXT_VERSION = "shadow-v1"  # in the vector cache's keys: bump when the texts embedded change
MAX_SENTENCES = 400  # a longer text is read in at most as many groups of consecutive sentences
MIN_WORDS = 4
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")
_WORD = re.compile(r"[^\W_]+")
_TERM = re.compile(r"\b\w\w+\b")


class ShadowModel(BaseModel):
    """The fitted claim classifier and the rule's thresholds (``lab shadow-fit`` writes them).

    The classifier is a logistic regression over a sentence's words and word pairs (``claim_terms``),
    weighed as scikit-learn's TfidfVectorizer weighs them (sublinear term frequency, smoothed idf, L2
    norm over the known terms): ``terms`` maps each known term to its (idf, coefficient)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["tool-selector-shadow/1"] = FORMAT
    version: str
    model_id: str = Field(description="the embedding model the meaning thresholds were measured with")
    terms: dict[str, tuple[float, float]]
    intercept: float
    claim_from: float = Field(description="a sentence is a claim from this probability")
    near_from: float = Field(description="a claim counts against a configured tool this close (cosine)")
    same_meaning_from: float
    short_copy_from: float
    copy_share: float
    copy_min_shingles: int
    provenance: dict[str, Any] = Field(default_factory=dict)

    def claim_probability(self, sentences: Sequence[str]) -> np.ndarray:
        """P(claim) of each sentence."""
        scores = np.zeros(len(sentences))
        for index, sentence in enumerate(sentences):
            counts: dict[str, int] = {}
            for term in claim_terms(sentence):
                if term in self.terms:
                    counts[term] = counts.get(term, 0) + 1
            weights = {t: (1.0 + math.log(n)) * self.terms[t][0] for t, n in counts.items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            scores[index] = self.intercept + sum(w * self.terms[t][1] for t, w in weights.items()) / norm
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(scores, -40, 40))))


def claim_terms(sentence: str) -> list[str]:
    """A sentence's words (lower case, two letters or more) and its pairs of consecutive words."""
    words = _TERM.findall(sentence.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


def load_shadow_model() -> ShadowModel:
    """The classifier shipped in the package (tool_selector/calibration/shadow-v1.json)."""
    model, _ = read_model_file(
        ShadowModel,
        None,
        packaged=MODEL_FILE,
        package="tool_selector.calibration",
        what="shadowing classifier",
        expected_format=FORMAT,
        remedy="`tool-selector lab shadow-fit`",
        setting=None,
    )
    return model


class Embeds(Protocol):
    """What the check needs of an embedder: normalised document vectors, and their model's name."""

    @property
    def model_id(self) -> str: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...


class VectorCache(Protocol):
    """The catalog's vector cache (``CatalogStore.get_vectors`` / ``put_vectors``)."""

    def get_vectors(self, model: str, text_hashes: Iterable[str]) -> dict[str, np.ndarray]: ...

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None: ...


@dataclass(frozen=True)
class Known:
    """A tool of a configured server, as the check compares with it. ``server_key``: its server's whole
    set of tools (names and definition hashes), so that the same server configured twice is seen."""

    server: str
    name: str
    description: str
    server_key: str


def server_key(tools: Iterable[tuple[str, str]]) -> str:
    """A server's tools as (name, definition hash) pairs, as one hash."""
    return sha256_of(sorted(tools))


def meaning_text(name: str, description: str) -> str:
    """The text compared by meaning: the name's words and the description."""
    return f"{' '.join(split_name(name))}: {prepare(description)}"[:4000]


def claim_sentences(definition: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(sentence, where) of every sentence of a definition but its name: the description's, and those of
    every string of its other fields (schemas, annotations, ...) with at least ``MIN_WORDS`` words; at
    most ``MAX_SENTENCES``, consecutive ones grouped beyond that."""
    pieces: list[tuple[str, str]] = [("description", str(definition.get("description") or ""))]
    for key, value in definition.items():
        if key not in ("name", "description") and isinstance(value, Mapping | list):
            pieces += [(f"{key} {'.'.join(path)}".strip(), raw) for path, raw in _strings(value, ())]
    found: list[tuple[str, str]] = []
    for where, raw in pieces:
        for part in _SENTENCE_END.split(raw):
            sentence = prepare(part).strip(" -*")
            if len(sentence.split()) >= MIN_WORDS:
                found.append((sentence[:600], where))
    if len(found) <= MAX_SENTENCES:
        return found
    size = math.ceil(len(found) / MAX_SENTENCES)
    return [(" ".join(s for s, _ in found[i : i + size]), found[i][1]) for i in range(0, len(found), size)]


def _strings(value: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    found: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            found.append((where, item))
        elif isinstance(item, Mapping) and len(where) < 40:
            stack.extend((sub, (*where, str(key))) for key, sub in reversed(list(item.items())))
        elif isinstance(item, list) and len(where) < 40:
            stack.extend((sub, where) for sub in reversed(item))
    return found


def full_text(definition: Mapping[str, Any]) -> str:
    """Every string of a definition but its name, for the copy test."""
    parts = [str(definition.get("description") or "")]
    for key, value in definition.items():
        if key not in ("name", "description") and isinstance(value, Mapping | list):
            parts += [raw for _, raw in _strings(value, ())]
    return " ".join(parts)


def shingles(text: str) -> frozenset[tuple[str, str, str]]:
    """The 3-word shingles of ``text`` (lower case, letters and digits)."""
    words = _WORD.findall(prepare(text).lower())
    return frozenset(zip(words, words[1:], words[2:], strict=False))


@dataclass
class _Compared:
    """The configured tools one write is compared with: their vectors and shingles, once per write."""

    known: list[Known]
    vectors: np.ndarray
    shingles: list[frozenset[tuple[str, str, str]]]
    by_shingle: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, found in enumerate(self.shingles):
            for shingle in found:
                self.by_shingle.setdefault(shingle, []).append(index)


class ShadowCheck:
    """The check of the module docstring over one embedder and the catalog's vector cache."""

    def __init__(self, embedder: Embeds, cache: VectorCache | None, model: ShadowModel) -> None:
        if embedder.model_id != model.model_id:
            raise ConfigurationError(
                f"The shadowing classifier {model.version!r} reads vectors of {model.model_id!r}, "
                f"not of {embedder.model_id!r}.",
                hint="Refit it with `tool-selector lab shadow-fit`, or reinstall tool-selector.",
            )
        self.embedder, self.cache, self.model = embedder, cache, model
        self._memo: dict[str, np.ndarray] = {}
        self._compared: tuple[Sequence[Known], _Compared] | None = None

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors: from this check, the catalog's cache, or the embedder (then cached)."""
        model = self.embedder.model_id
        keys = [sha256_of([model, TEXT_VERSION, t]) for t in texts]
        wanted = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if wanted and self.cache is not None:
            self._memo.update(self.cache.get_vectors(model, wanted))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._memo}
        if missing:
            made = self.embedder.embed_documents(list(missing.values()))
            fresh = {k: np.asarray(v, dtype=np.float32) for k, v in zip(missing, made, strict=True)}
            if self.cache is not None:
                self.cache.put_vectors(model, fresh)
            self._memo.update(fresh)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memo[k] for k in keys])

    def _against(self, known: Sequence[Known]) -> _Compared:
        """The configured tools' vectors and shingles, made once for the list a write passes each time."""
        if self._compared is None or self._compared[0] is not known:
            vectors = self.vectors([meaning_text(k.name, k.description) for k in known])
            self._compared = (
                known,
                _Compared(list(known), vectors, [shingles(k.description) for k in known]),
            )
        return self._compared[1]

    def prepare(self, tools: Sequence[ToolSpec], known: Sequence[Known]) -> None:
        """Embed what ``judge`` will read (before a write's transaction, so that it never waits on the
        model while holding the database)."""
        if known and tools:
            self.judge("", tools, known, own_key="")

    def judge(
        self, server: str, tools: Sequence[ToolSpec], known: Sequence[Known], *, own_key: str
    ) -> dict[str, Finding]:
        """The finding on each tool of ``server`` (by name) that copies or claims a configured tool of
        another server; ``own_key``: ``server_key`` of ``server``'s tools (a twin is not compared)."""
        others = np.array([k.server != server and k.server_key != own_key for k in known], dtype=bool)
        if not others.any() or not tools:
            return {}
        compared = self._against(known)
        sims = self.vectors([meaning_text(t.name, t.description) for t in tools]) @ compared.vectors.T
        sims[:, ~others] = -1.0  # its own server, and the same server configured twice, never count
        found: dict[str, Finding] = {}
        near: list[int] = []
        for index, tool in enumerate(tools):
            copied = self._copied(tool, sims[index], compared, others)
            if copied is not None:
                found[tool.name] = copied
            elif float(sims[index].max()) >= self.model.near_from:
                near.append(index)
        found.update(self._claims([tools[i] for i in near], sims[near], compared))
        return found

    def _copied(
        self, tool: ToolSpec, sims: np.ndarray, compared: _Compared, others: np.ndarray
    ) -> Finding | None:
        model, mine = self.model, shingles(full_text(tool.definition()))
        shared: dict[int, int] = {}
        for shingle in mine:
            for index in compared.by_shingle.get(shingle, ()):
                if others[index]:
                    shared[index] = shared.get(index, 0) + 1
        for index, count in sorted(shared.items(), key=lambda p: -p[1]):
            size = len(compared.shingles[index])
            long_copy = size >= model.copy_min_shingles and count >= model.copy_share * size
            if long_copy or (count == size >= 3 and float(sims[index]) >= model.short_copy_from):
                return _finding("copies the description of", compared.known[index])
        best = int(sims.argmax())
        if float(sims[best]) >= model.same_meaning_from:
            return _finding("says what it says", compared.known[best], f"similarity {float(sims[best]):.2f}")
        return None

    def _claims(self, tools: list[ToolSpec], sims: np.ndarray, compared: _Compared) -> dict[str, Finding]:
        sentences = [claim_sentences(t.definition()) for t in tools]
        flat = [s for found in sentences for s, _ in found]
        if not flat:
            return {}
        probability = self.model.claim_probability(flat)
        found: dict[str, Finding] = {}
        at = 0
        for index, (tool, own) in enumerate(zip(tools, sentences, strict=True)):
            mine, at = probability[at : at + len(own)], at + len(own)
            if not own or float(mine.max()) < self.model.claim_from:
                continue
            sentence, where = own[int(mine.argmax())]
            best = int(sims[index].argmax())
            k = compared.known[best]
            reason = (
                f"claims to do the job of tool {k.name!r} of configured server {k.server!r} better or in its "
                f"place (close in meaning: {float(sims[index, best]):.2f}): {quote(sentence)} in {where}"
            )
            found[tool.name] = Finding("shadowing", "hold", reason)
        return found


def _finding(what: str, k: Known, detail: str = "") -> Finding:
    said = f"{what} tool {k.name!r} of configured server {k.server!r}"
    if what == "says what it says":
        said = f"says what tool {k.name!r} of configured server {k.server!r} says"
    return Finding("shadowing", "hold", f"{said} ({detail})" if detail else said)
