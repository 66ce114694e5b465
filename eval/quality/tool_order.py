"""``tool-selector lab tool-order``: which tool of the right power comes first, under several orders.

The gateway's next call names the first tool of the activated decision, which is the first of the top
power's tools in the resolver's order (tool_selector/resolve/toolorder.py). This measures, on datasets
with tool gold, how often that first tool is right, for several orders of the same candidates:

- within the gold server: every answerable request whose first gold server (the server of its first
  slot's first tool) has two tools or more; right when the first of that server's tools fills a slot;
- activations: the requests activated with a right top power of two tools or more; right when its
  first tool fills a slot (the next call the gateway builds).

Each request is resolved once (the lab's workspaces: an index per catalog, built once); every order is
then a score over the candidates' signals (``ToolSignals``: the cosine and the keyword score, min-max
scaled, the action-entity match, the argument fit). ``hybrid`` is the fused search's own order, as it
was before the tool order; ``fitted`` picks the weights leave-one-dataset-out: for each dataset, the
grid point best on the others (the mean of their shares, each set weighing the same), scored on it.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eval.quality.choices import Phrasing
from eval.quality.dataset import (
    DatasetPaths,
    Query,
    check_dataset_dir,
    dataset_folders,
    has_phrasing,
    load_phrased,
)
from eval.quality.workspace import open_workspace
from services.resolve.read_path import ReadPath
from tool_selector.config.settings import Settings
from tool_selector.core.errors import CatalogFileError, InvalidInputError
from tool_selector.core.files import read_text_limited
from tool_selector.core.names import server_of
from tool_selector.resolve.resolver import Ranking, check_query, check_request
from tool_selector.resolve.toolorder import ACTION, DENSE, ToolOrder, ToolSignals
from tool_selector.route.steps import with_known_parts
from tool_selector.route.tiers import route

logger = logging.getLogger(__name__)

HYBRID = "hybrid"
FITTED = "fitted"
SHIPPED = "shipped"
ORDERS: dict[str, ToolOrder] = {  # the named orders the table shows beside hybrid and fitted
    "dense": ToolOrder(dense=1.0, action=0.0),
    "blend-0.5": ToolOrder(dense=0.5, action=0.0),
    "blend-0.7": ToolOrder(dense=0.7, action=0.0),
    "blend-0.8": ToolOrder(dense=0.8, action=0.0),
    "blend-0.9": ToolOrder(dense=0.9, action=0.0),
    "hybrid+action": ToolOrder(dense=0.5, action=0.1),
    "dense+action": ToolOrder(dense=1.0, action=0.1),
    "blend-0.8+action": ToolOrder(dense=0.8, action=0.1),
    SHIPPED: ToolOrder(dense=DENSE, action=ACTION),
}
GRID: tuple[ToolOrder, ...] = tuple(
    ToolOrder(dense=d / 10, action=a / 100) for d in range(5, 11) for a in (0, 5, 10, 15, 20, 30, 50)
)


@dataclass(frozen=True)
class Case:
    """One request as one power's tools see it: its candidate tools in the fused order with their
    signals, the power's other tools in the server's order, and the tools that fill a slot."""

    set: str  # the dataset and phrasing it is scored in
    family: str  # the dataset it belongs to: left out together, whatever the phrasing
    id: str
    tools: tuple[str, ...]
    signals: tuple[ToolSignals, ...]
    rest: tuple[str, ...]
    gold: frozenset[str]
    argument_weight: float = 0.0
    activated: bool = False  # the power was activated (a right one): its first tool is the next call


@dataclass
class SetResult:
    """One set's share right first per order, within the gold server and over its activations."""

    within: dict[str, float | None] = field(default_factory=dict)
    activations: dict[str, float | None] = field(default_factory=dict)
    counts: tuple[int, int] = (0, 0)  # requests within the gold server, activations
    fitted: ToolOrder | None = None  # the grid point chosen without this set's dataset


def first_tool(case: Case, order: ToolOrder | None) -> str | None:
    """The first of the power's tools: by the fused order (``None``) or by ``order``'s score, ties in the
    fused order; the server's first tool when the search found none of them."""
    if not case.tools:
        return case.rest[0] if case.rest else None
    if order is None:
        return case.tools[0]
    scores = [order.score(s, case.argument_weight) for s in case.signals]
    return case.tools[max(range(len(scores)), key=lambda i: (scores[i], -i))]


def share_right(cases: Sequence[Case], order: ToolOrder | None) -> float | None:
    """The share of ``cases`` whose first tool fills a slot; None for no case."""
    if not cases:
        return None
    return sum(first_tool(c, order) in c.gold for c in cases) / len(cases)


def mean_share(by_set: Mapping[str, Sequence[Case]], order: ToolOrder) -> float:
    """The mean over the sets (each weighing the same) of their share right first; sets with no case
    are left out."""
    shares = [s for s in (share_right(c, order) for c in by_set.values()) if s is not None]
    return sum(shares) / len(shares) if shares else 0.0


def best_order(by_set: Mapping[str, Sequence[Case]], grid: Sequence[ToolOrder] = GRID) -> ToolOrder:
    """The grid point with the best mean share over ``by_set``; on a tie the first of the grid."""
    if not grid:
        raise ValueError("the grid is empty")
    best, best_score = grid[0], mean_share(by_set, grid[0])
    for order in grid[1:]:
        score = mean_share(by_set, order)
        if score > best_score + 1e-12:
            best, best_score = order, score
    return best


def leave_one_out(cases: Sequence[Case], grid: Sequence[ToolOrder] = GRID) -> dict[str, ToolOrder]:
    """Per dataset (family), the grid point best within the gold server on the sets of every other
    dataset (the activations are scored, never fitted on)."""
    families = sorted({c.family for c in cases})
    chosen = {}
    for family in families:
        others: dict[str, list[Case]] = {}
        for case in cases:
            if case.family != family and not case.activated:
                others.setdefault(case.set, []).append(case)
        chosen[family] = best_order(others, grid)
    return chosen


def figures(
    cases: Sequence[Case], orders: Mapping[str, ToolOrder], grid: Sequence[ToolOrder] = GRID
) -> dict[str, SetResult]:
    """Per set, the share right first of ``hybrid``, of each named order and (given three datasets or
    more) of the order fitted without the set's dataset."""
    by_set: dict[str, list[Case]] = {}
    for case in cases:
        by_set.setdefault(case.set, []).append(case)
    fitted = leave_one_out(cases, grid) if len({c.family for c in cases}) >= 3 else {}
    results = {}
    for name, own in by_set.items():
        within = [c for c in own if not c.activated]
        active = [c for c in own if c.activated]
        chosen = fitted.get(own[0].family)
        named: dict[str, ToolOrder | None] = {HYBRID: None, **orders}
        result = SetResult(counts=(len(within), len(active)), fitted=chosen)
        for label, order in named.items():
            result.within[label] = share_right(within, order)
            result.activations[label] = share_right(active, order)
        if chosen is not None:
            result.within[FITTED] = share_right(within, chosen)
            result.activations[FITTED] = share_right(active, chosen)
        results[name] = result
    return results


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(results: Mapping[str, SetResult], which: str = "within") -> str:
    """A Markdown table: a row per set (its count), a column per order, and the mean of the sets."""
    if not results:
        return "(no set)"
    labels = list(next(iter(results.values())).within)
    index = 0 if which == "within" else 1
    head = ["set", "n", *labels]
    rows = [head, ["---"] * len(head)]
    sums: dict[str, list[float]] = {label: [] for label in labels}
    for name, result in results.items():
        shares = result.within if which == "within" else result.activations
        rows.append([name, str(result.counts[index]), *(_cell(shares.get(label)) for label in labels)])
        for label in labels:
            value = shares.get(label)
            if value is not None:
                sums[label].append(value)
    rows.append(["mean of sets", "", *(_cell(sum(v) / len(v) if v else None) for v in sums.values())])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def fitted_lines(results: Mapping[str, SetResult]) -> list[str]:
    """Which grid point each set's fitted column used (chosen without its dataset)."""
    return [
        f"- {name}: dense {r.fitted.dense:.1f}, action {r.fitted.action:.2f}"
        for name, r in results.items()
        if r.fitted is not None
    ]


# -- resolving -------------------------------------------------------------------------------------------


def gold_server(query: Query) -> str | None:
    """The request's first gold server: the server of its first slot's first tool."""
    return server_of(query.gold_tool_groups[0][0]) if query.gold_tool_groups else None


def catalog_tools(paths: DatasetPaths, limit_bytes: int) -> list[str]:
    """The tool ids of a dataset's tools.json (the catalog the workspace imports; its checks apply)."""
    text = read_text_limited(paths.tools, limit_bytes=limit_bytes, what="catalog file")
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogFileError(f"{paths.tools} is not JSON: {exc}.", path=str(paths.tools)) from exc
    if not isinstance(tools, list):
        raise CatalogFileError(f"{paths.tools} must hold a JSON list of tools.", path=str(paths.tools))
    return [f"{t.get('server')}::{t.get('name')}" for t in tools if isinstance(t, dict)]


def case_of(
    ranking: Ranking, power: str, own: Sequence[str], gold: Iterable[str], **labels: str | bool
) -> Case:
    """The case of ``power`` (whose tools, in the server's order, are ``own``) in one ranking."""
    ids = {f"{power}::{name}" for name in own}
    tools = tuple(h.id for h in ranking.hits if h.server == power and h.id in ids and h.id in ranking.signals)
    found = set(tools)
    rest = tuple(f"{power}::{n}" for n in own if f"{power}::{n}" not in found)
    return Case(
        set=str(labels["set"]),
        family=str(labels["family"]),
        id=str(labels["id"]),
        tools=tools,
        signals=tuple(ranking.signals[t] for t in tools),
        rest=rest,
        gold=frozenset(t for t in gold if server_of(t) == power),
        argument_weight=ranking.argument_weight,
        activated=bool(labels.get("activated", False)),
    )


@dataclass(frozen=True)
class DatasetSpec:
    """A set to measure: its name, its dataset (the family left out together) and its folders."""

    name: str
    family: str
    folders: tuple[Path, ...]


def datasets_of(arguments: Sequence[str], each: Sequence[Path] = ()) -> list[DatasetSpec]:
    """A set per ``PATH`` or ``FAMILY=PATH`` argument (named by its folder; a FAMILY names the dataset
    several sets share, left out together: msc_bench_dev and its 10-server cuts), then one per folder
    under each ``each`` root."""
    out = []
    for argument in arguments:
        family, _, path = str(argument).rpartition("=")
        name = Path(path).resolve().name
        out.append(DatasetSpec(name, family or name, tuple(dataset_folders(Path(path)))))
    for root in each:
        out += [DatasetSpec(f.name, f.name, (f,)) for f in dataset_folders(root)]
    names = [d.name for d in out]
    if len(set(names)) < len(names):
        raise InvalidInputError(
            f"Two sets share a folder name: {names}.", hint="Give each set a folder of its own name."
        )
    return out


def collect(
    settings: Settings,
    datasets: Sequence[DatasetSpec],
    phrasings: Sequence[Phrasing] = ("user",),
    *,
    enricher: str | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Case]:
    """Resolve every answerable request whose first gold server has two tools or more, in each phrasing
    a dataset has (a dataset without the agent's phrasing is read in people's words only), and return
    the cases: within its gold server, and of its activated power when a right one was activated."""
    cases: list[Case] = []
    for dataset in datasets:
        for phrasing in phrasings:
            folders = [f for f in dataset.folders if has_phrasing(f, phrasing)]
            label = dataset.name if phrasing == "user" else f"{dataset.name} ({phrasing})"
            found = 0
            for folder in folders:
                found += _collect_folder(settings, folder, phrasing, label, dataset.family, enricher, cases)
            if folders and say is not None:
                say(f"{label}: {found} requests resolved")
    return cases


def _collect_folder(
    settings: Settings,
    folder: Path,
    phrasing: Phrasing,
    label: str,
    family: str,
    enricher: str | None,
    cases: list[Case],
) -> int:
    paths = check_dataset_dir(folder)
    queries, asked = load_phrased(paths, phrasing, limit_bytes=settings.max_file_bytes)
    sizes = Counter(server_of(t) for t in catalog_tools(paths, settings.max_file_bytes))
    if not any(sizes[s] >= 2 for s in (gold_server(q) for q in queries) if s is not None):
        return 0  # every request's server has one tool (MetaTool's plugins): nothing to order
    container, _ = open_workspace(settings, paths, enricher=enricher)
    resolved = 0
    with container:
        read_path = ReadPath.fixed(container)
        snapshot = read_path.snapshot()
        resolver, terms, powers = container.resolver, snapshot.terms, snapshot.powers
        own = {name: [t.name for t in info.tools] for name, info in powers.items()}
        for query, item in zip(queries, asked, strict=True):
            server = gold_server(query)
            if server is None or len(own.get(server, ())) < 2:
                continue
            resolved += 1
            words = check_request(item.request, resolver.max_query_chars)
            ranking = resolver.rank(check_query(item.query, resolver.max_query_chars), "hybrid", terms, words)
            resolution = with_known_parts(resolver.answer(ranking, terms), powers)
            decision = route(resolution, powers, settings.confidence.thresholds)
            gold = {t for slot in query.gold_tool_groups for t in slot}
            tags = {"set": label, "family": family, "id": f"{folder.name}/{query.id}"}
            cases.append(case_of(ranking, server, own[server], gold, **tags))
            power = decision.power if decision.status == "activated" else None
            if power and len(own.get(power, ())) >= 2 and any(server_of(t) == power for t in gold):
                cases.append(case_of(ranking, power, own[power], gold, **tags, activated=True))
    return resolved
