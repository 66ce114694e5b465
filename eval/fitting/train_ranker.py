"""``tool-selector lab train-ranker``: fit the learned ranker on labelled queries of benchmark-format folders.

For every answerable query the resolver runs as in production with the ranker off (it sees only the query
text) and keeps its first candidates and their features (``tool_selector.resolve.rerank.features``);
afterwards
each candidate is labelled 1 when it fills a gold slot. The fit is LightGBM's lambdarank, each dataset
argument weighing the same (a set of 4,000 short requests does not drown one of 95 long tasks).

Figures come from folds grouped by server: each gold server belongs to one fold, a query to the fold of
its first gold server, and a fold's model is fitted only on queries none of whose gold servers belong to
the held-back fold, so a server's tools are never labelled in both. The figures printed and stored in the
file are those held-back folds, beside the fused order they replace. The shipped model is then fitted on
every query and exported as plain trees (``tool_selector.resolve.rerank.model``): scoring needs numpy only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from eval.extras import lab_import
from eval.quality.dataset import DatasetArg, check_dataset_dir, expand_datasets, load_queries
from eval.quality.ranking import server_of, server_recall_at_k, tool_recall_at_k
from eval.quality.workspace import catalog_files_hash, open_workspace
from services.resolve.snapshot import IndexSnapshot
from tool_selector.config.settings import Settings
from tool_selector.core.errors import InvalidInputError
from tool_selector.embedding.embedders import Embedder
from tool_selector.resolve.confidence import Tree, TreeEnsemble
from tool_selector.resolve.rerank.features import RANK_FEATURES, rank_features
from tool_selector.resolve.rerank.model import RankerModel
from tool_selector.resolve.resolver import RERANKED

Progress = Callable[[str, int, int], None]

LEARNER: dict[str, Any] = {
    "objective": "lambdarank",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "max_depth": 5,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "seed": 0,
    "deterministic": True,
    "num_threads": 2,
    "verbose": -1,
}
ROUNDS = 300
FOLDS = 5


@dataclass
class Example:
    """One answerable query's candidates: features, labels, and the fused order they came in."""

    dataset: str
    query_id: str
    level: int | None
    gold: list[list[str]]
    ids: list[str]
    rows: np.ndarray
    labels: np.ndarray
    fused_tools: list[str]
    powers: list[str]

    @property
    def gold_servers(self) -> set[str]:
        return {server_of(t) for slot in self.gold for t in slot}


def collect(
    settings: Settings,
    folder: Path,
    *,
    dataset: str,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    max_queries: int | None = None,
) -> list[Example]:
    """Every answerable query of one dataset folder (or a fixed sample of ``max_queries``, by hash of
    id) ranked as production does (ranker off), labelled only after all of them ran."""
    paths = check_dataset_dir(folder)
    queries = [q for q in load_queries(paths.queries, limit_bytes=settings.max_file_bytes) if q.answerable]
    if max_queries is not None and len(queries) > max_queries:
        queries = sorted(queries, key=lambda q: hashlib.sha256(q.id.encode()).hexdigest())[:max_queries]
    unranked = settings.changed("search", rerank=False)
    container, _ = open_workspace(unranked, paths, embedder=embedder)
    found = []
    with container:
        terms = IndexSnapshot(container).terms
        for done, query in enumerate(queries, start=1):
            ranking = container.resolver.rank(query.query.strip(), "hybrid", terms)
            if ranking.candidates is not None:
                rows = rank_features(ranking.candidates, terms)
                found.append((query, ranking, rows))
            if progress is not None:
                progress(f"{dataset}/{folder.name}", done, len(queries))
    examples = []
    for query, ranking, rows in found:  # gold is read only from here on
        assert ranking.candidates is not None
        gold = {t for slot in query.gold_tool_groups for t in slot}
        ids = [h.id for h in ranking.candidates.hits]
        examples.append(
            Example(
                dataset=dataset,
                query_id=query.id,
                level=query.level,
                gold=query.gold_tool_groups,
                ids=ids,
                rows=rows,
                labels=np.asarray([1 if i in gold else 0 for i in ids], dtype=np.int64),
                fused_tools=[h.id for h in ranking.hits],
                powers=[p.name for p in ranking.powers],
            )
        )
    return examples


def fold_of(server: str, folds: int) -> int:
    return int(hashlib.sha256(server.encode()).hexdigest(), 16) % folds


def _weights(examples: Sequence[Example]) -> np.ndarray:
    """One weight per query (LightGBM's lambdarank reads a group's weight from its first row): each
    dataset sums to the same total."""
    per: dict[str, int] = {}
    for e in examples:
        per[e.dataset] = per.get(e.dataset, 0) + 1
    return np.concatenate([np.full(len(e.ids), 1000.0 / per[e.dataset]) for e in examples])


def fit_booster(examples: Sequence[Example], rounds: int = ROUNDS) -> Any:
    lgb = lab_import("lightgbm", "Training the ranker")  # the fit's own dependency: serving reads the trees

    learnable = [e for e in examples if e.labels.any()]
    if not learnable:
        raise InvalidInputError(
            "No query has a gold tool among its candidates: there is nothing to learn from.",
            hint="Give dataset folders with answerable queries whose gold tools are in the catalog.",
        )
    data = lgb.Dataset(
        np.vstack([e.rows for e in learnable]),
        np.concatenate([e.labels for e in learnable]),
        group=[len(e.ids) for e in learnable],
        weight=_weights(learnable),
        feature_name=list(RANK_FEATURES),
    )
    return lgb.train(LEARNER, data, rounds)


def _flatten(root: dict[str, Any]) -> Tree:
    """One LightGBM tree (nested dicts) as parallel arrays, nodes in pre-order: children after parents."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    stack: list[tuple[dict[str, Any], int, str]] = [(root, -1, "")]
    while stack:
        node, parent, side = stack.pop()
        i = len(feature)
        if parent >= 0:
            (left if side == "left" else right)[parent] = i
        leaf = "split_feature" not in node
        if not leaf and node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported LightGBM split {node.get('decision_type')!r}")
        feature.append(-1 if leaf else int(node["split_feature"]))
        threshold.append(0.0 if leaf else float(node["threshold"]))
        left.append(i)
        right.append(i)
        value.append(float(node.get("leaf_value", 0.0)) if leaf else 0.0)
        if not leaf:
            stack.append((node["right_child"], i, "right"))
            stack.append((node["left_child"], i, "left"))
    return Tree(feature=feature, threshold=threshold, left=left, right=right, value=value)


def export(booster: Any) -> TreeEnsemble:
    """LightGBM's trees as the flat arrays ``TreeEnsemble`` scores with (a node goes left when
    ``x <= threshold``, LightGBM's rule for numeric splits)."""
    return TreeEnsemble(
        baseline=0.0, trees=[_flatten(info["tree_structure"]) for info in booster.dump_model()["tree_info"]]
    )


def _order(example: Example, scores: np.ndarray) -> list[str]:
    head = [example.ids[i] for i in np.argsort(-scores, kind="stable")]
    return head + [t for t in example.fused_tools if t not in set(head)]


def figures_of(examples: Sequence[Example], orders: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Tool recall@1/@5 and server recall@3 of the fused order and of ``orders`` (by query key), overall,
    per dataset, and for msc-style multi-server requests (level 4)."""
    groups: dict[str, list[Example]] = {"all": list(examples)}
    for e in examples:
        groups.setdefault(f"dataset {e.dataset}", []).append(e)
        if e.level == 4:
            groups.setdefault(f"dataset {e.dataset} level 4", []).append(e)
    out: dict[str, dict[str, Any]] = {}
    for name, group in groups.items():
        row: dict[str, Any] = {"queries": len(group)}
        for label, tools_of in (("fused", lambda e: e.fused_tools), ("ranker", lambda e: orders[_key(e)])):
            row[f"{label}_tool_r1"] = round(
                float(np.mean([tool_recall_at_k(e.gold, tools_of(e), 1) for e in group])), 4
            )
            row[f"{label}_tool_r5"] = round(
                float(np.mean([tool_recall_at_k(e.gold, tools_of(e), 5) for e in group])), 4
            )
        row["server_r3"] = round(float(np.mean([server_recall_at_k(e.gold, e.powers, 3) for e in group])), 4)
        row["server_r5"] = round(float(np.mean([server_recall_at_k(e.gold, e.powers, 5) for e in group])), 4)
        for k in (1, 3, 5):  # what powers ranked by the ranker's tool order would reach (not shipped)
            row[f"ranker_order_server_r{k}"] = round(
                float(
                    np.mean(
                        [server_recall_at_k(e.gold, servers_in(orders[_key(e)], e.powers), k) for e in group]
                    )
                ),
                4,
            )
        out[name] = row
    return out


def servers_in(tools: Sequence[str], powers: Sequence[str]) -> list[str]:
    """Servers in the order their tools first appear in ``tools``, then the other ``powers``."""
    seen = dict.fromkeys(server_of(t) for t in tools)
    return [*seen, *(p for p in powers if p not in seen)]


def _key(e: Example) -> str:
    return f"{e.dataset}\0{e.query_id}"


def held_back_orders(examples: Sequence[Example], folds: int, rounds: int) -> dict[str, list[str]]:
    """Each query ranked by a model fitted without any query that shares a gold server with its fold."""
    fold = {_key(e): fold_of(sorted(e.gold_servers)[0], folds) for e in examples}
    orders: dict[str, list[str]] = {}
    for f in range(folds):
        test = [e for e in examples if fold[_key(e)] == f]
        if not test:
            continue
        held = {s for e in test for s in e.gold_servers}
        train = [e for e in examples if fold[_key(e)] != f and not (e.gold_servers & held)]
        booster = fit_booster(train, rounds)
        for e in test:
            orders[_key(e)] = _order(e, np.asarray(booster.predict(e.rows)))
    return orders


def train_ranker(
    settings: Settings,
    datasets: Sequence[Path],
    *,
    out: Path,
    version: str,
    folds: int = FOLDS,
    rounds: int = ROUNDS,
    max_queries: int | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    command: str = "",
) -> RankerModel:
    """Collect, measure on held-back folds, fit on everything, write ``out``; returns the model."""
    if folds < 2:
        raise InvalidInputError(f"--folds must be at least 2, got {folds}.", hint="Use 5 (the default).")
    args: list[DatasetArg] = expand_datasets(datasets)
    examples: list[Example] = []
    provenance_sets = []
    for arg in args:
        for folder in arg.folders:
            examples += collect(
                settings,
                folder,
                dataset=arg.name,
                embedder=embedder,
                progress=progress,
                max_queries=max_queries,
            )
        provenance_sets.append(
            {
                "dataset": arg.name,
                "catalogs": len(arg.folders),
                "sha256": hashlib.sha256(
                    "".join(catalog_files_hash(check_dataset_dir(f)) for f in arg.folders).encode()
                ).hexdigest(),
            }
        )
    figures = figures_of(examples, held_back_orders(examples, folds, rounds))
    model = RankerModel(
        version=version,
        features=list(RANK_FEATURES),
        candidates=RERANKED,
        ensemble=export(fit_booster(examples, rounds)),
        provenance={
            "command": command,
            "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "datasets": provenance_sets,
            "queries": len(examples),
            "retrieval": {
                "alpha": settings.search.alpha,
                "fusion": settings.search.fusion,
                "field_boosts": settings.search.field_boosts,
                "server_field_boosts": settings.search.server_field_boosts,
                "candidates": settings.search.candidates,
                "embedding": settings.embedding.model,
                "enricher": settings.sync.enricher,
            },
            "learner": {
                **LEARNER,
                "rounds": rounds,
                "library": "lightgbm",
                "folds": folds,
                "grouped_by": "server",
            },
            "weighting": "every dataset argument weighs the same",
        },
        figures={"held_back_folds": figures},
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(model.model_dump_json(indent=None), encoding="utf-8")
    tmp.replace(out)
    return model
