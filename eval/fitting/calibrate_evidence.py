"""The evidence ``tool-selector lab calibrate`` fits on: every query of a dataset folder resolved as in
production (the resolver sees only the query text, under a neutral calibration), then labelled from its
gold: ``correct`` when the top power fills a gold slot, ``top3`` when one of the first three does."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from eval.quality.choices import Phrasing, Reading
from eval.quality.dataset import catalog_size, check_dataset_dir, load_phrased
from eval.quality.ranking import server_recall_at_k, top_server_fills_a_slot
from eval.quality.readings import PRODUCT, resolve_asked
from eval.quality.workspace import open_workspace
from services.resolve.read_path import ReadPath
from tool_selector.config.settings import Settings
from tool_selector.core.errors import CalibrationError, InvalidInputError
from tool_selector.embedding.embedders import Embedder
from tool_selector.index.build import cached_tool_vectors
from tool_selector.resolve.confidence import Calibration, Head, Isotonic, Tree, TreeEnsemble
from tool_selector.resolve.evidence import FEATURES
from tool_selector.resolve.judge import PACKAGED

Progress = Callable[[str, int, int], None]


def parse_judges(values: Sequence[str]) -> dict[str, Path]:
    """``--judge NAME=DIR`` options: the dataset NAME's evidence is read with the judge in DIR (one that
    `lab judge` trained without NAME's family), so that no dataset's judge feature is in-sample."""
    out: dict[str, Path] = {}
    for value in values:
        name, sep, folder = value.partition("=")
        if not sep or not name or not folder:
            raise InvalidInputError(
                f"--judge {value!r} is not NAME=DIR.", hint="--judge msc=/tmp/judge-no-msc"
            )
        if not (Path(folder) / "judge.onnx").is_file():
            raise InvalidInputError(
                f"--judge {value!r}: {folder} holds no judge.onnx.",
                hint="Give a folder `tool-selector lab judge --out DIR` wrote.",
            )
        out[name] = Path(folder)
    return out


def with_judge(settings: Settings, judges: Mapping[str, Path], dataset: str) -> Settings:
    """The settings a dataset's evidence is read under: its own judge when ``judges`` names one."""
    folder = judges.get(dataset)
    return settings if folder is None else settings.changed("confidence", judge_dir=folder)


def judge_identity(settings: Settings) -> bytes:
    """What tells one judge from another in a cache key: its head (retrained, it changes) and where."""
    if not settings.confidence.judge:
        return b"judge off"
    head = (settings.confidence.judge_dir or PACKAGED) / "head.json"
    return str(settings.confidence.judge_dir).encode() + (
        head.read_bytes() if head.is_file() else b"no judge"
    )


class Example(BaseModel):
    dataset: str
    catalog: str
    catalog_servers: int
    id: str
    level: int | None
    origin: str | None
    answerable: bool
    correct: bool
    top3: bool
    evidence: dict[str, float]
    phrasing: Phrasing = "user"  # whose words were resolved (eval/quality/dataset.py)

    def label(self, head: str) -> bool:
        return self.correct if head == "top" else self.top3


def neutral_calibration(reference: np.ndarray) -> Calibration:
    """A calibration that says 0.5 for everything: evidence is collected with it (the fit must not
    depend on an earlier fit), carrying the reference centroid the evidence reads."""
    flat = Head(
        ensemble=TreeEnsemble(
            baseline=0.0, trees=[Tree(feature=[-1], threshold=[0.0], left=[0], right=[0], value=[0.0])]
        ),
        isotonic=Isotonic(x=[0.0, 1.0], y=[0.0, 1.0]),
    )
    return Calibration(
        version="neutral",
        features=list(FEATURES),
        reference=[float(v) for v in reference],
        top=flat,
        top3=flat,
    )


def reference_centroid(
    settings: Settings, folders: Sequence[Path], *, embedder: Embedder | None = None
) -> tuple[np.ndarray, int]:
    """The mean vector of every distinct tool of these catalogs (their workspaces are built on the way),
    and how many tools it averages."""
    vectors: dict[str, np.ndarray] = {}
    for folder in folders:
        container, _ = open_workspace(settings, check_dataset_dir(folder), embedder=embedder)
        with container:
            vectors.update(cached_tool_vectors(container.store, container.embedder.model_id))
    if not vectors:
        raise CalibrationError(
            "The fit catalogs hold no tool, so there is nothing to fit the confidence against.",
            hint="Give dataset folders whose tools.json lists tools.",
        )
    return np.mean(np.stack(list(vectors.values())), axis=0), len(vectors)


def collect_examples(
    settings: Settings,
    folder: Path,
    *,
    dataset: str,
    reference: np.ndarray,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    phrasing: Phrasing = "user",
    reading: Reading = PRODUCT,
) -> list[Example]:
    """Resolve every query of one dataset folder as production does (in ``phrasing``, a request beside
    the query read as ``reading`` says: eval/quality/readings.py), then label each resolution."""
    paths = check_dataset_dir(folder)
    loaded, items = load_phrased(paths, phrasing, limit_bytes=settings.max_file_bytes)
    queries = {q.id: q for q in loaded}
    servers = catalog_size(paths, limit_bytes=settings.max_file_bytes)
    container, _ = open_workspace(
        settings, paths, embedder=embedder, calibration=neutral_calibration(reference)
    )
    resolutions = {}
    with container:
        read_path = ReadPath.fixed(container)
        for done, asked in enumerate(items, start=1):
            resolutions[asked.id] = resolve_asked(read_path, asked, reading=reading)
            if progress is not None:
                progress(f"{dataset}/{folder.name}", done, len(items))
    examples = []
    for query_id, resolution in resolutions.items():  # gold is read only from here on
        query = queries[query_id]
        names = [p.name for p in resolution.powers]
        examples.append(
            Example(
                dataset=dataset,
                catalog=f"{dataset}/{folder.name}",
                catalog_servers=servers,
                id=query_id,
                level=query.level,
                origin=query.origin,
                answerable=query.answerable,
                correct=query.answerable and top_server_fills_a_slot(query.gold_tool_groups, names),
                top3=query.answerable and server_recall_at_k(query.gold_tool_groups, names, 3) > 0,
                evidence=resolution.features,
                phrasing=phrasing,
            )
        )
    return examples


def collect_in_worker(job: tuple[Settings, Path, str, np.ndarray]) -> list[Example]:
    settings, folder, dataset, reference = job
    return collect_examples(settings, folder, dataset=dataset, reference=reference)
