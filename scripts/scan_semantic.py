"""Experiment: a sentence-level semantic detector beside the scanner's rules (not wired into the product).

Each tool definition is cut into sentences (the description, and every description, title, default or
example string of its schemas and annotations); each sentence is embedded with all-MiniLM-L6-v2 (the
product's model) and scored; a tool's score is the score of its most suspicious sentence. A score
over the threshold would be a *flag* finding (never a hold). Scorers tried (``SCORERS``):

- ``knn``: max cosine to the attack sentences of the training sources minus max cosine to their
  benign sentences. Attack items hold sentences that only say what the tool does; those are dropped
  from the attack bank when a benign sentence of the training sources is closer than ``WITNESS_COS``
  (a one-step multiple-instance filter); ``knn-top1`` keeps each attack item's least benign-like one.
- ``lr`` (C=1), ``lr-c0.1``, ``lr-top1``: a logistic regression (class weights balanced) on sentence
  vectors, attack sentences (after the same filter) against benign ones.
- ``lr-contrast``: the same on [sentence vector, sentence vector - the tool's first sentence's
  vector], so that a sentence is also read against what the tool says it does. At run time a
  logistic scorer is one dot product per sentence (768 floats and a bias; numpy only).

Sources (groups): the shared poison corpus (attack and benign items, by repository), the paraphrase
set's dev half (attacks, benign), the real catalogs msc_bench_dev and livemcpbench (benign), and the
paraphrase set's test half, which is never used to fit or to choose anything: it is scored once.

Validation, leave-one-source-out. For each held-out source the model is fitted on the training
sources that remain, and its threshold is chosen on them alone: each real benign source among them
(msc, livemcp, the paraphrase dev benign half) is held out in turn, the model refitted without it and
the score it would need to flag at most ``FP_BUDGET`` of that source taken; the threshold is the
highest of these. Training sentences that occur word for word in the held-out source are dropped.

    export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
    .venv/bin/python scripts/scan_semantic.py --select
    .venv/bin/python scripts/scan_semantic.py --final --scorer lr-contrast \\
        --scorer knn --scorer knn-top1 --scorer lr --scorer lr-top1 --scorer lr-c0.1

Chosen before the test half was scored (from ``--select``, 0.5 % inner budget): ``lr-contrast``, the
only variant that found more than a few held-out attacks (dev halves 6/16 and 2/16, shared corpus
3/75, dev half from the shared corpus alone 4/32); ``knn`` found 0 in every attack fold. The other
variants are scored on the test half in the same single run, for the record only.

``--select``: the model-selection folds only (shared corpus <-> paraphrase dev half, and the real
catalogs); ``--final``: every held-out fold of the chosen scorer, the test half included, plus the
cost per tool (one thread). Fitting the logistic scorers needs scikit-learn (a dev extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from services.write.scanning import read_jsonl_tools, scan_path
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES
from tool_selector.core.models import ToolSpec
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.trust.batch import Definition
from tool_selector.trust.findings import prepare

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "benchmarks"
PARAPHRASES = ROOT / "eval" / "datasets" / "poison-paraphrases" / "corpus.jsonl"
DIAGNOSTIC_BUDGETS = (0.01, 0.02, 0.05)
FP_BUDGET = 0.005  # share of a held-out real benign source the inner threshold may flag
WITNESS_COS = 0.8  # an attack item's sentence this close to a benign one is not an attack sentence
MIN_WORDS = 3
MAX_WORDS = 48  # longer sentences are cut into windows of this many words (overlapping by a third)
MAX_SENTENCES = 64  # per tool
_TEXT_KEYS = frozenset({"description", "title", "default", "examples", "example"})
_TAGS = re.compile(r"</?[A-Za-z][A-Za-z _-]{0,30}>|\[\[+|\]\]+|#{3,}")
_BLOCKS = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*\u2022]|\d+[.)]|[A-Za-z_]+:\s))")
_ENDS = re.compile(r"(?<=[.!?])\s+(?=\S)")
_WORD = re.compile(r"[A-Za-z]{2,}")


# -- sentences ---------------------------------------------------------------------------------------


def _split(raw: str) -> Iterator[str]:
    for block in _BLOCKS.split(_TAGS.sub("\n\n", raw)):
        for sentence in _ENDS.split(prepare(block)):
            words = sentence.split()
            if len(_WORD.findall(sentence)) < MIN_WORDS:
                continue
            if len(words) <= MAX_WORDS:
                yield sentence
                continue
            step = MAX_WORDS * 2 // 3
            for start in range(0, len(words) - MAX_WORDS // 3, step):
                yield " ".join(words[start : start + MAX_WORDS])


def _schema_strings(value: Any, key: str = "", depth: int = 0) -> Iterator[str]:
    if depth > 20:
        return
    if isinstance(value, str):
        if key in _TEXT_KEYS:
            yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _schema_strings(v, str(k) if key != "properties" else "", depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _schema_strings(v, key if key in ("examples", "enum") else "", depth + 1)


def sentences(tool: Definition) -> list[str]:
    """The sentences of a definition the detector scores, in order, without repeats."""
    pieces = [tool.description]
    for schema in (tool.input_schema, tool.output_schema, tool.annotations):
        pieces.extend(_schema_strings(schema or {}))
    seen: dict[str, None] = {}
    for piece in pieces:
        for sentence in _split(piece):
            seen.setdefault(sentence, None)
    return list(seen)[:MAX_SENTENCES]


# -- items and sources -------------------------------------------------------------------------------


@dataclass
class Item:
    id: str
    group: str  # shared:<repo> | para-dev-attack | para-dev-benign | para-test-* | msc | livemcp
    poisoned: bool
    rules_detected: bool
    sentences: list[str] = field(default_factory=list)


def _jsonl_rows(path: Path) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in (json.loads(x) for x in path.read_text().splitlines() if x.strip())}


def _definition(s: ToolSpec) -> Definition:
    return Definition(s.id, s.server, s.name, s.description, s.input_schema, s.output_schema, s.annotations)


def load_items(shared: Path = SHARED, paraphrases: Path = PARAPHRASES) -> list[Item]:
    items: list[Item] = []
    corpus = shared / "poison" / "corpus.jsonl"
    rows = _jsonl_rows(corpus)
    rules = {i.id: i.verdict != "clean" for i in scan_path(corpus, limit_bytes=DEFAULT_MAX_FILE_BYTES).items}
    for tool in read_jsonl_tools(corpus, limit_bytes=DEFAULT_MAX_FILE_BYTES):
        row = rows[tool.id]
        repo = str(row["source"]).split("@")[0]
        poisoned = row["label"] == "poisoned"
        items.append(Item(tool.id, f"shared:{repo}", poisoned, rules[tool.id], sentences(tool)))
    rows = _jsonl_rows(paraphrases)
    rules = {
        i.id: i.verdict != "clean" for i in scan_path(paraphrases, limit_bytes=DEFAULT_MAX_FILE_BYTES).items
    }
    for tool in read_jsonl_tools(paraphrases, limit_bytes=DEFAULT_MAX_FILE_BYTES):
        row = rows[tool.id]
        poisoned = row["label"] == "poisoned"
        group = f"para-{row['split']}-{'attack' if poisoned else 'benign'}"
        items.append(Item(tool.id, group, poisoned, rules[tool.id], sentences(tool)))
    for name, folder in (("msc", shared / "msc_bench_dev"), ("livemcp", shared / "livemcpbench")):
        report = scan_path(folder, limit_bytes=DEFAULT_MAX_FILE_BYTES)
        rules = {i.id: i.verdict != "clean" for i in report.items if i.kind == "tool"}
        _, specs = read_catalog_dir(folder, limit_bytes=DEFAULT_MAX_FILE_BYTES)
        items += [Item(s.id, name, False, rules[s.id], sentences(_definition(s))) for s in specs]
    return items


# -- vectors -----------------------------------------------------------------------------------------


def embed_all(texts: Sequence[str], cache: Path, embedder: MiniLMEmbedder | None = None) -> np.ndarray:
    """Vectors of ``texts`` (unique), read from and added to an .npz cache keyed by sha256."""
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache.is_file():
        with np.load(cache) as data:
            known = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    missing = [i for i, k in enumerate(keys) if k not in known]
    if missing:
        embedder = embedder or MiniLMEmbedder(Path.home() / ".cache" / "tool-selector", threads=1)
        vectors = embedder.embed_documents([texts[i] for i in missing])
        for i, v in zip(missing, vectors, strict=True):
            known[keys[i]] = v
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[k] for k in keys]).astype(np.float32)


# -- scorers -----------------------------------------------------------------------------------------


class Scorer:
    """Fitted on sentence vectors: ``pos`` (attack items' sentences), ``neg`` (benign sentences)."""

    def fit(self, pos: np.ndarray, neg: np.ndarray) -> Scorer:
        raise NotImplementedError

    def score(self, vectors: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _max_cos(a: np.ndarray, b: np.ndarray, chunk: int = 2048) -> np.ndarray:
    out = np.full(len(a), -1.0, dtype=np.float32)
    for start in range(0, len(b), chunk):
        out = np.maximum(out, (a @ b[start : start + chunk].T).max(axis=1))
    return out


class Knn(Scorer):
    def fit(self, pos: np.ndarray, neg: np.ndarray) -> Knn:
        self.attack, self.benign = pos, neg
        return self

    def score(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(_max_cos(vectors, self.attack) - _max_cos(vectors, self.benign))


class Logistic(Scorer):
    def __init__(self, c: float = 1.0) -> None:
        self.c = c

    def fit(self, pos: np.ndarray, neg: np.ndarray) -> Logistic:
        from sklearn.linear_model import LogisticRegression

        x = np.vstack([pos, neg])
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        model = LogisticRegression(C=self.c, class_weight="balanced", max_iter=5000).fit(x, y)
        self.w, self.b = model.coef_[0].astype(np.float32), float(model.intercept_[0])
        return self

    def score(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(vectors @ self.w + self.b)  # the logit: monotone in the probability


@dataclass(frozen=True)
class Spec:
    """A scorer, its features and how attack sentences are picked from attack items.

    ``features``: ``sentence`` (the sentence's vector) or ``contrast`` (the sentence's vector beside
    its difference from the tool's first sentence: how far it strays from what the tool says it does).
    ``witness``: ``filter`` keeps the attack items' sentences whose nearest benign sentence is below
    ``WITNESS_COS``; ``top1`` keeps each item's least benign-like one."""

    make: Any
    witness: str = "filter"
    c: float = 1.0
    features: str = "sentence"

    def build(self) -> Scorer:
        return Logistic(self.c) if self.make is Logistic else Knn()


SCORERS = {
    "knn": Spec(Knn),
    "knn-top1": Spec(Knn, "top1"),
    "lr": Spec(Logistic),
    "lr-top1": Spec(Logistic, "top1"),
    "lr-c0.1": Spec(Logistic, c=0.1),
    "lr-contrast": Spec(Logistic, c=0.1, features="contrast"),
}


# -- the experiment ----------------------------------------------------------------------------------


class Data:
    """Every item; its sentences as instances (item, row of the sentence's vector, row of the item's
    first sentence) over one matrix of unique sentence vectors."""

    def __init__(self, items: list[Item], cache: Path) -> None:
        self.items = items
        unique = list(dict.fromkeys(s for i in items for s in i.sentences))
        self.row = {s: n for n, s in enumerate(unique)}
        self.vectors = embed_all(unique, cache)
        self.groups = np.array([i.group for i in items])
        self.poisoned = np.array([i.poisoned for i in items])
        self.rules = np.array([i.rules_detected for i in items])
        triples = [
            (n, self.row[s], self.row[i.sentences[0]]) for n, i in enumerate(items) for s in i.sentences
        ]
        self.inst_item, self.inst_row, self.inst_first = (
            np.array(x, dtype=np.int64) for x in zip(*triples, strict=True)
        )

    def rows(self, picked: Iterable[int]) -> set[int]:
        return {self.row[s] for n in picked for s in self.items[n].sentences}

    def features(self, spec: Spec, inst: np.ndarray) -> np.ndarray:
        v = np.asarray(self.vectors[self.inst_row[inst]])
        if spec.features == "contrast":
            return np.hstack([v, v - self.vectors[self.inst_first[inst]]])
        return v

    def fit(self, scorer: str, train: np.ndarray, exclude: set[int]) -> Scorer:
        spec = SCORERS[scorer]
        usable = train[self.inst_item] & ~np.isin(self.inst_row, sorted(exclude))
        neg = np.flatnonzero(usable & ~self.poisoned[self.inst_item])
        benign_rows = np.unique(self.inst_row[neg])
        cand = np.flatnonzero(usable & self.poisoned[self.inst_item] & ~np.isin(self.inst_row, benign_rows))
        nearest = _max_cos(self.vectors[self.inst_row[cand]], self.vectors[benign_rows])
        if spec.witness == "top1":
            best: dict[int, tuple[float, int]] = {}
            for i, near in zip(cand.tolist(), nearest.tolist(), strict=True):
                item = int(self.inst_item[i])
                if item not in best or near < best[item][0]:
                    best[item] = (near, i)
            pos = np.array(sorted(i for _, i in best.values()), dtype=np.int64)
        else:
            pos = cand[nearest < WITNESS_COS]
        if spec.features == "sentence":  # the same sentence in many items is one example
            pos = pos[np.unique(self.inst_row[pos], return_index=True)[1]]
            neg = neg[np.unique(self.inst_row[neg], return_index=True)[1]]
        return spec.build().fit(self.features(spec, pos), self.features(spec, neg))

    def item_scores(self, scorer: str, model: Scorer, picked: np.ndarray) -> np.ndarray:
        inst = np.flatnonzero(picked[self.inst_item])
        out = np.full(len(self.items), -np.inf)
        if len(inst):
            np.maximum.at(out, self.inst_item[inst], model.score(self.features(SCORERS[scorer], inst)))
        return out

    def member(self, *groups: str) -> np.ndarray:
        return np.array([any(g == x or g.startswith(x + ":") for x in groups) for g in self.groups])


CALIBRATION = ("msc", "livemcp", "para-dev-benign")


def fit_fold(
    data: Data, scorer: str, train: np.ndarray, held: np.ndarray
) -> tuple[Scorer, dict[str, np.ndarray]]:
    """The model fitted on ``train`` (minus sentences of ``held``), and the scores of each real benign
    source of ``train`` under the model refitted without that source (for the threshold)."""
    exclude = data.rows(np.flatnonzero(held))
    inner_scores: dict[str, np.ndarray] = {}
    for source in CALIBRATION:
        inner = data.member(source) & train
        if not inner.any():
            continue
        model = data.fit(scorer, train & ~inner, exclude | data.rows(np.flatnonzero(inner)))
        inner_scores[source] = data.item_scores(scorer, model, inner)[inner]
    return data.fit(scorer, train, exclude), inner_scores


def threshold_at(inner_scores: dict[str, np.ndarray], budget: float) -> tuple[float, dict[str, float]]:
    """The lowest score that flags at most ``budget`` of every inner held-out benign source."""
    each = {k: float(np.quantile(v, 1 - budget, method="higher")) for k, v in inner_scores.items()}
    return max(each.values()), each


def _count(mask: np.ndarray, hits: np.ndarray) -> str:
    return f"{int(hits[mask].sum())}/{int(mask.sum())}"


def fold(data: Data, scorer: str, name: str, held: np.ndarray, train: np.ndarray) -> dict[str, Any]:
    started = time.process_time()
    model, inner_scores = fit_fold(data, scorer, train, held)
    threshold, inner = threshold_at(inner_scores, FP_BUDGET)
    scores = data.item_scores(scorer, model, held)
    hits = scores > threshold
    out: dict[str, Any] = {
        "held_out": name,
        "threshold": round(threshold, 4),
        "inner_thresholds": {k: round(v, 4) for k, v in inner.items()},
    }
    for label, mask in (("attacks", held & data.poisoned), ("benign", held & ~data.poisoned)):
        if mask.any():
            verb = "detected" if label == "attacks" else "flagged"
            out[label] = {
                f"rules_{verb}": _count(mask, data.rules),
                f"detector_{verb}": _count(mask, hits),
                f"either_{verb}": _count(mask, data.rules | hits),
            }
            # diagnostics only (never used to choose): what looser budgets would give
            out[label]["detector_at_looser_budgets"] = {
                f"{b:.1%}": _count(mask, scores > threshold_at(inner_scores, b)[0])
                for b in DIAGNOSTIC_BUDGETS
            }
    benign_pool = np.concatenate(list(inner_scores.values()))
    attacks = scores[held & data.poisoned]
    if len(attacks):
        # share of inner benign items scoring below each attack, averaged: an AUC against the
        # training folds' benign sources
        out["auc_vs_inner_benign"] = round(float(np.mean([np.mean(benign_pool < a) for a in attacks])), 3)
    out["flagged_benign_ids"] = [data.items[n].id for n in np.flatnonzero(held & ~data.poisoned & hits)][:12]
    out["missed_attack_ids"] = [data.items[n].id for n in np.flatnonzero(held & data.poisoned & ~hits)]
    out["fit_cpu_s"] = round(time.process_time() - started, 1)
    return out


def dev_half(data: Data, parity: int) -> np.ndarray:
    picked = np.flatnonzero(data.member("para-dev-attack"))[parity::2]
    mask = np.zeros(len(data.items), dtype=bool)
    mask[picked] = True
    return mask


def folds(data: Data, scorer: str, final: bool) -> list[dict[str, Any]]:
    test = data.member("para-test-attack", "para-test-benign")
    everything = ~test
    plan: list[tuple[str, np.ndarray, np.ndarray]] = [
        # shared corpus held out: fitted on the paraphrase dev half and the real catalogs
        ("shared corpus (75 attacks, 60 benign)", data.member("shared"), everything & ~data.member("shared")),
        # paraphrase dev attacks held out: fitted on the shared corpus and every benign source
        (
            "paraphrase dev attacks",
            data.member("para-dev-attack"),
            everything & ~data.member("para-dev-attack"),
        ),
        # the dev attacks halved (alternating, in file order): same author and style as the test half,
        # other items; the closest stand-in for the test fold that the dev half allows
        ("paraphrase dev attacks, even half", dev_half(data, 0), everything & ~dev_half(data, 0)),
        ("paraphrase dev attacks, odd half", dev_half(data, 1), everything & ~dev_half(data, 1)),
        ("msc_bench_dev", data.member("msc"), everything & ~data.member("msc")),
        ("livemcpbench", data.member("livemcp"), everything & ~data.member("livemcp")),
        (
            "paraphrase benign (dev and test halves)",
            data.member("para-dev-benign", "para-test-benign"),
            everything & ~data.member("para-dev-benign"),
        ),
    ]
    if final:
        plan.append(("paraphrase TEST half (scored once)", test, everything))
    return [fold(data, scorer, name, held, train) for name, held, train in plan]


def cost(data: Data, scorer: str, folder: Path) -> dict[str, Any]:
    """Seconds per tool to cut, embed (one thread, no cache) and score a catalog's tools."""
    _, specs = read_catalog_dir(folder, limit_bytes=DEFAULT_MAX_FILE_BYTES)
    model = data.fit(scorer, ~data.member("para-test-attack", "para-test-benign"), set())
    embedder = MiniLMEmbedder(Path.home() / ".cache" / "tool-selector", threads=1)
    embedder.embed_documents(["warm up"])
    wall, cpu = time.perf_counter(), time.process_time()
    cut = [sentences(_definition(s)) for s in specs]
    flat = [s for c in cut for s in c]
    vectors = embedder.embed_documents(flat)
    firsts = np.repeat(np.cumsum([0] + [len(c) for c in cut[:-1]]), [len(c) for c in cut])
    if SCORERS[scorer].features == "contrast":
        vectors = np.hstack([vectors, vectors - vectors[firsts]])
    model.score(vectors)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "catalog": folder.name,
        "tools": len(specs),
        "sentences": len(flat),
        "sentences_per_tool": round(len(flat) / len(specs), 2),
        "ms_per_tool_wall": round(1000 * wall / len(specs), 2),
        "ms_per_tool_cpu": round(1000 * cpu / len(specs), 2),
        "estimate_100k_tools_min": round(100_000 * wall / len(specs) / 60, 1),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scorer", choices=list(SCORERS), action="append")
    parser.add_argument("--final", action="store_true", help="every fold, the test half included, and cost")
    parser.add_argument("--select", action="store_true", help="the model-selection folds only")
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "tool-selector" / "eval" / "scan_semantic.npz"
    )
    args = parser.parse_args(argv)
    data = Data(load_items(), args.cache)
    counts = {g: int((data.groups == g).sum()) for g in sorted(set(data.groups.tolist()))}
    report: dict[str, Any] = {
        "items_by_group": counts,
        "unique_sentences": len(data.row),
        "fp_budget_inner": FP_BUDGET,
        "witness_cos": WITNESS_COS,
    }
    chosen = args.scorer or list(SCORERS)
    for scorer in chosen:
        report[scorer] = folds(data, scorer, final=args.final)
    if args.final:  # the embedding dominates: measured once, for the first scorer named
        report[f"cost_{chosen[0]}"] = cost(data, chosen[0], SHARED / "msc_bench_dev")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
