"""Would a learned classifier beat the scanner's rules? ``tool-selector lab bench-scan --classifier``.

A logistic regression (scikit-learn, class weights balanced) over all-MiniLM-L6-v2 embeddings of each
tool's text (description, then every string of its schemas), trained on the labelled corpus plus the
real catalogs' tools as benign examples, and judged by grouped cross-validation: one group per
source (each repository of the corpus, each catalog), every group held out once, so each figure is
on a source the model never saw. Two thresholds: 0.5, and the one that flags at most 0.5 % of the
real tools of the training folds (the false-positive budget of issue 15), applied to the held-out
group. The rules' figures on the same items (``scan_tool`` alone, each source's names as context)
are printed beside them, and "either" (rules or classifier) for what a combination would give.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.extras import lab_import
from services.root.container import Container
from services.write.scanning import read_jsonl_tools
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.config.settings import Settings
from tool_selector.core.files import read_text_limited
from tool_selector.trust.batch import Definition
from tool_selector.trust.findings import Field
from tool_selector.trust.scanner import ScanContext, scan_tool

FP_BUDGET = 0.005


def _text(tool: Definition) -> str:
    field = Field()
    field.add("description", tool.description)
    field.add_json("input_schema", tool.input_schema)
    return field.text.replace("\u2029", " ")[:2000]


def _rules(tools: Sequence[Definition]) -> list[bool]:
    context = ScanContext.from_tools((t.server, t.name) for t in tools if t.server and t.name)
    return [
        scan_tool(t.server, t.name, t.description, t.input_schema, context=context).verdict != "clean"
        for t in tools
    ]


def _items(corpus: Path, catalogs: list[Path], limit_bytes: int) -> tuple[list[str], Any, Any, Any, Any]:
    """texts, labels (1 poisoned), groups, is-real-catalog, rules' detection, for corpus and catalogs."""
    rows = {
        str(r["id"]): r
        for r in (
            json.loads(line)
            for line in read_text_limited(corpus, limit_bytes=limit_bytes, what="corpus file").splitlines()
            if line.strip()
        )
    }
    texts, labels, groups, real, rules = [], [], [], [], []
    tools = read_jsonl_tools(corpus, limit_bytes=limit_bytes)
    by_source: dict[str, list[Definition]] = {}
    for tool in tools:
        by_source.setdefault(str(rows[tool.id].get("source", "")).split("@")[0], []).append(tool)
    sources: list[tuple[str, list[Definition], bool]] = [(s, t, False) for s, t in by_source.items()]
    for folder in catalogs:
        _, specs = read_catalog_dir(folder, limit_bytes=limit_bytes)
        defs = [Definition(s.id, s.server, s.name, s.description, s.input_schema) for s in specs]
        sources.append((folder.resolve().name, defs, True))
    for group, members, is_real in sources:
        rules += _rules(members)
        for tool in members:
            texts.append(_text(tool))
            labels.append(0 if is_real else int(rows[tool.id].get("label") == "poisoned"))
            groups.append(group)
            real.append(is_real)
    return texts, np.array(labels), np.array(groups), np.array(real), np.array(rules)


def _figures(flags: Any, labels: Any, real: Any) -> dict[str, Any]:
    poisoned = labels == 1
    benign_corpus = (labels == 0) & ~real
    return {
        "poisoned_detected": f"{int(flags[poisoned].sum())}/{int(poisoned.sum())}",
        "corpus_benign_flagged": f"{int(flags[benign_corpus].sum())}/{int(benign_corpus.sum())}",
        "real_tools_flagged": f"{int(flags[real].sum())}/{int(real.sum())}",
    }


def classifier_experiment(
    settings: Settings, corpus: Path, catalogs: list[Path], *, limit_bytes: int
) -> dict[str, Any]:
    linear = lab_import("sklearn.linear_model", "The scanner's classifier experiment")
    selection = lab_import("sklearn.model_selection", "The scanner's classifier experiment")

    texts, labels, groups, real, rules = _items(corpus, catalogs, limit_bytes)
    with Container(settings) as container:
        vectors = container.embedder.embed_documents(texts)
    scores = np.zeros(len(texts))
    at_budget = np.zeros(len(texts), dtype=bool)
    for train, test in selection.LeaveOneGroupOut().split(vectors, labels, groups):
        model = linear.LogisticRegression(class_weight="balanced", C=1.0, max_iter=5000)
        model.fit(vectors[train], labels[train])
        train_real = train[real[train]]
        threshold = float(np.quantile(model.predict_proba(vectors[train_real])[:, 1], 1 - FP_BUDGET))
        scores[test] = model.predict_proba(vectors[test])[:, 1]
        at_budget[test] = scores[test] > max(threshold, 0.5)
    half = scores >= 0.5
    return {
        "method": "logistic regression on all-MiniLM-L6-v2 embeddings; leave-one-source-out",
        "groups": sorted(set(groups.tolist())),
        "rules": _figures(rules, labels, real),
        "classifier_at_0.5": _figures(half, labels, real),
        "classifier_at_fp_budget": _figures(at_budget, labels, real),
        "rules_or_classifier_at_fp_budget": _figures(rules | at_budget, labels, real),
    }
