"""``tool-selector lab calibrate-lodo``: the confidence judged leave-one-dataset-out (issue 30, item 2).

Every dataset argument is resolved once as in production (evidence under a neutral calibration, as
``lab calibrate`` collects it; kept in the work folder and reused while the catalog, the queries and the
retrieval settings are the same). Then, for each dataset, both heads are fitted by a recipe of
``eval.fitting.calibrate_fit`` on every *other* dataset and the left-out one is scored: its ECE, the tiers
its requests get and how right they are. Arguments with the same ``NAME=`` form one dataset (a family:
msc's 10-server cuts and its full catalog); a folder passed with ``--each`` makes one dataset of each of
its setups (the team's personal setups are left out setup by setup). Each left-out dataset weighs the
same in the means; a family of setups is averaged first.

The reference centroid the evidence reads (how generic a request is) is the mean tool vector of every
catalog given: catalogs may reach an index, queries never do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.fitting.calibrate import add_folder, score_with
from eval.fitting.calibrate_evidence import (
    Example,
    collect_examples,
    judge_identity,
    reference_centroid,
    with_judge,
)
from eval.fitting.calibrate_fit import RECIPES, Recipe, fit_heads
from eval.quality.choices import Phrasing, Reading
from eval.quality.dataset import (
    check_dataset_dir,
    dataset_folders,
    has_phrasing,
    named_datasets,
    phrased_file,
)
from eval.quality.readings import PRODUCT
from eval.quality.reliability import calibration_error
from tool_selector.config.settings import Settings, TierThresholds
from tool_selector.core.errors import InvalidInputError
from tool_selector.embedding.embedders import model_id_of
from tool_selector.resolve.evidence import FEATURES
from tool_selector.route.tiers import tier_of

USER: tuple[Phrasing, ...] = ("user",)
FIGURES = (
    "top_power_right",
    "ece",
    "answerable_activated",
    "activated_precision",
    "answerable_not_found",
    "unanswerable_activated",
    "unanswerable_not_found",
    "ambiguous_activated",
    "tier_accuracy",
    "not_found",
)
SHORT = {
    "top_power_right": "srv R@1",
    "ece": "ECE",
    "answerable_activated": "ans act",
    "activated_precision": "prec",
    "answerable_not_found": "ans nf",
    "unanswerable_activated": "unans act",
    "unanswerable_not_found": "unans nf",
    "ambiguous_activated": "amb act",
    "tier_accuracy": "tier acc",
    "not_found": "nf",
}


@dataclass(frozen=True)
class Dataset:
    """One dataset of the protocol: its name and its folders."""

    name: str
    folders: tuple[Path, ...]


def datasets_of(arguments: Sequence[str], each: Sequence[Path] = ()) -> list[Dataset]:
    """``NAME=PATH`` or ``PATH`` arguments (``eval.quality.dataset.named_datasets``), then one dataset per
    folder under each ``each`` root, named ``<root>/<folder>``."""
    out = [Dataset(a.name, a.folders) for a in named_datasets(arguments)]
    for root in each:
        out += [Dataset(f"{root.resolve().name}/{f.name}", (f,)) for f in dataset_folders(root)]
    names = [d.name for d in out]
    if len(set(names)) < len(names) or len(out) < 3:
        raise InvalidInputError(
            f"Leave-one-dataset-out needs at least three datasets of distinct names; got {names}.",
            hint="Give more datasets, and name those that share a folder name with NAME=PATH.",
        )
    return out


@dataclass(frozen=True)
class Labelled:
    """An example and what its query says beyond the gold (for the personal setups and gateway-demo)."""

    example: Example
    expected_tier: str | None
    ambiguous: bool


def _key(
    settings: Settings, folder: Path, reference: np.ndarray, phrasing: Phrasing = "user", reading: str = ""
) -> str:
    digest = hashlib.sha256()
    add_folder(digest, folder, settings.max_file_bytes)
    if phrasing != "user":  # the agent's lines, and what is read of a request beside them
        digest.update(phrased_file(folder, phrasing).read_bytes())
        digest.update(f"{phrasing}:{reading if phrasing == 'both' else ''}".encode())
    # what the evidence does not read: the folders, the tier lines
    unread: dict[str, Any] = {"cache_dir": True, "data_dir": True, "confidence": {"thresholds": True}}
    kept = settings.model_dump_json(exclude=unread)
    digest.update(kept.encode())
    digest.update(np.round(reference, 6).tobytes())
    digest.update(" ".join(FEATURES).encode())  # evidence of another version of the features is stale
    digest.update(judge_identity(settings))
    # the relevance model's file: a retrained model keeps its settings name, its evidence is not the same
    digest.update(model_id_of(settings.embedding.model, settings.embedding.engine).encode())
    return digest.hexdigest()[:16]


def _extras(folder: Path, phrasing: Phrasing = "user") -> dict[str, tuple[str | None, bool]]:
    """Per query id (of the phrasing's query file): its expected tier and whether the team marked it
    ambiguous."""
    out: dict[str, tuple[str | None, bool]] = {}
    check_dataset_dir(folder)
    for line in phrased_file(folder, phrasing).read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            ambiguous = bool(record.get("ambiguous")) or record.get("category") == "ambiguous"
            out[str(record["id"])] = (record.get("expected_tier"), ambiguous)
    return out


def collect(
    settings: Settings,
    datasets: Sequence[Dataset],
    work: Path,
    *,
    say: Callable[[str], None] = print,
    phrasings: Sequence[Phrasing] = USER,
    reading: Reading = PRODUCT,
    judges: Mapping[str, Path] | None = None,
) -> dict[str, list[Labelled]]:
    """Every dataset's labelled examples (resolved now, or read back from ``work``), in each of
    ``phrasings`` its folders have (people's words always; the agent's where a queries-agent.jsonl is;
    ``both`` read as ``reading`` says); a dataset ``judges`` names is read with that capability judge."""
    work.mkdir(parents=True, exist_ok=True)
    folders = [f for d in datasets for f in d.folders]
    reference, tools = reference_centroid(settings, folders)
    say(f"reference: the mean vector of {tools} tools")
    out: dict[str, list[Labelled]] = {}
    for dataset in datasets:
        found: list[Labelled] = []
        for folder in dataset.folders:
            for phrasing in (p for p in phrasings if has_phrasing(folder, p)):
                judged = with_judge(settings, judges or {}, dataset.name)
                examples = _examples(judged, folder, dataset.name, reference, work, phrasing, reading, say)
                extras = _extras(folder, phrasing)
                for e in examples:
                    e.dataset = dataset.name  # the cache is by folder; the dataset is this run's name
                    tier, ambiguous = extras.get(e.id, (None, False))
                    found.append(Labelled(e, tier, ambiguous))
        out[dataset.name] = found
        say(f"{dataset.name}: {len(found)} requests")
    return out


def _examples(
    settings: Settings,
    folder: Path,
    dataset: str,
    reference: np.ndarray,
    work: Path,
    phrasing: Phrasing,
    reading: Reading,
    say: Callable[[str], None],
) -> list[Example]:
    """One folder's examples in one phrasing: read back from ``work``, or resolved now and kept there."""
    key = _key(settings, folder, reference, phrasing, reading)
    suffix = "" if phrasing == "user" else f"-{phrasing}" + (f"-{reading}" if phrasing == "both" else "")
    cache = work / "examples" / f"{folder.name}{suffix}-{key}.json"
    if cache.is_file():
        return [Example.model_validate(e) for e in json.loads(cache.read_text("utf-8"))]
    say(f"  resolving {dataset}/{folder.name} ({phrasing})")
    examples = collect_examples(
        settings, folder, dataset=dataset, reference=reference, phrasing=phrasing, reading=reading
    )
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([e.model_dump() for e in examples]), encoding="utf-8")
    return examples


def _share(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def figures(
    labelled: Sequence[Labelled], top: Sequence[float], top3: Sequence[float], thresholds: TierThresholds
) -> dict[str, Any]:
    """The tier figures of the decision issue for one left-out dataset."""
    tiers = [tier_of(a, b, thresholds) for a, b in zip(top, top3, strict=True)]
    plain = [i for i, x in enumerate(labelled) if x.example.answerable and not x.ambiguous]
    ambiguous = [i for i, x in enumerate(labelled) if x.ambiguous]
    unanswerable = [i for i, x in enumerate(labelled) if not x.example.answerable]
    activated = [i for i in plain if tiers[i] == "activated"]

    def share_in(group: list[int], tier: str) -> float | None:
        return _share(sum(tiers[i] == tier for i in group), len(group))

    expected = [i for i, x in enumerate(labelled) if x.expected_tier]
    answerable = [x for x in labelled if x.example.answerable]
    return {
        "requests": len(labelled),
        "top_power_right": _share(sum(x.example.correct for x in answerable), len(answerable)),
        "ece": round(calibration_error(list(top), [x.example.correct for x in labelled]), 4),
        "answerable_activated": _share(len(activated), len(plain)),
        "activated_precision": _share(sum(labelled[i].example.correct for i in activated), len(activated)),
        "answerable_not_found": share_in(plain, "not_found"),
        "unanswerable_activated": share_in(unanswerable, "activated"),
        "unanswerable_not_found": share_in(unanswerable, "not_found"),
        "ambiguous_activated": share_in(ambiguous, "activated"),
        "tier_accuracy": _share(sum(tiers[i] == labelled[i].expected_tier for i in expected), len(expected)),
        "not_found": _share(tiers.count("not_found"), len(tiers)),
    }


def run_lodo(
    examples: dict[str, list[Labelled]],
    thresholds: TierThresholds,
    recipes: Sequence[Recipe] = tuple(RECIPES.values()),
    *,
    folds: int = 5,
    say: Callable[[str], None] = print,
    scored: Phrasing = "user",
    fitted: Collection[Phrasing] = USER,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per left-out dataset and recipe, the figures of heads fitted on every other dataset: on their
    examples in the ``fitted`` phrasings, scoring the left-out one's in the ``scored`` phrasing (a
    dataset without it is only fitted on). Nothing of the left-out dataset, in any phrasing, is fitted."""
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for left, every in examples.items():
        held = [x for x in every if x.example.phrasing == scored]
        if not held:
            continue
        rest = [
            x.example
            for name, xs in examples.items()
            if name != left
            for x in xs
            if x.example.phrasing in fitted
        ]
        results[left] = {}
        for recipe in recipes:
            k = min(folds, _catalogs(rest))
            fit = fit_heads(rest, version=f"lodo-{left}", reference=np.zeros(1), folds=k, recipe=recipe)
            top, top3 = score_with(fit.calibration, [x.example for x in held])
            results[left][recipe.name] = figures(held, top, top3, thresholds)
            row = results[left][recipe.name]
            say(
                f"  {left:34s} {recipe.name:14s} "
                + "  ".join(f"{SHORT[f]} {row[f]:.3f}" for f in FIGURES if row[f] is not None)
            )
    return results


def _catalogs(examples: Sequence[Example]) -> int:
    return len({e.catalog for e in examples})


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """A row per left-out dataset and recipe, then each recipe's mean over the left-out datasets (each
    weighs the same; a family of setups, ``<root>/<setup>``, is averaged first)."""
    recipes = sorted({r for rows in results.values() for r in rows})
    lines = [
        "| left out | recipe | " + " | ".join(SHORT[f] for f in FIGURES) + " |",
        "|---|---|" + "---|" * len(FIGURES),
    ]

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for left, rows in results.items():
        for recipe in recipes:
            cells = " | ".join(cell(rows[recipe][f]) for f in FIGURES)
            lines.append(f"| {left} | {recipe} | {cells} |")
    lines += ["", "| mean over left-out datasets | " + " | ".join(SHORT[f] for f in FIGURES) + " |"]
    lines.append("|---|" + "---|" * len(FIGURES))
    for recipe in recipes:
        lines.append(f"| {recipe} | " + " | ".join(cell(mean(results, recipe, f)) for f in FIGURES) + " |")
    return "\n".join(lines)


def mean(results: dict[str, dict[str, dict[str, Any]]], recipe: str, figure: str) -> float | None:
    """The mean of a figure over the left-out datasets that have it, a family of setups averaged first."""
    families: dict[str, list[float]] = {}
    for left, rows in results.items():
        value = rows.get(recipe, {}).get(figure)
        if value is not None:
            families.setdefault(left.split("/")[0], []).append(value)
    if not families:
        return None
    return round(sum(sum(v) / len(v) for v in families.values()) / len(families), 4)
