"""``lab eval``, ``lab calibrate`` and ``lab train-ranker``: measure resolving and fit its learned parts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eval.cli.app import lab
from eval.quality.choices import PHRASINGS, Phrasing, Reading
from routes.cli.base import EnricherChoice, cli_settings, echo_json, mapped_errors, progress
from tool_selector.core.errors import InvalidInputError

DATASETS_HELP = (
    "Dataset folders (servers.json, tools.json, queries.jsonl) or small-catalog roots (a folder of "
    "k<servers>-<n>/ dataset folders, as shared/benchmarks/make_subcatalogs.py writes them)"
)


PHRASING_HELP = (
    "Which words are resolved: user (queries.jsonl, people's words), agent (queries-agent.jsonl, the "
    "agent's query) or both (the agent's query, the person's words beside it as the request)"
)
READING_HELP = (
    "With --phrasing both, what the resolver reads: arguments (the product's: the query is searched and "
    "judged, the request's arguments order the tools), judged (the same, and the confidence reads the "
    "request's arguments too), query (the query alone), joined (one text) or fused (each resolved, "
    "scores averaged); eval/quality/readings.py"
)


@lab.command("eval")
def eval_command(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP)],
    predictions: Annotated[Path, typer.Option(help="Where to write one JSON line per query")],
    report: Annotated[
        Path | None,
        typer.Option(
            help="Also write a Markdown report here, with ECE and a reliability diagram (PNG) beside it"
        ),
    ] = None,
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: the configured enricher)"),
    ] = None,
    phrasing: Annotated[Phrasing, typer.Option(help=PHRASING_HELP)] = "user",
    reading: Annotated[Reading, typer.Option(help=READING_HELP)] = "arguments",
) -> None:
    """Resolve every query of the datasets and print recall, MRR, tiers, calibration and latency: all
    together, per dataset and per catalog size.

    Each catalog is enriched as the nightly sync would; its queries never are."""
    from eval.quality.harness import run_eval
    from eval.quality.report import format_console

    with mapped_errors():
        result, _ = run_eval(
            cli_settings(),
            datasets,
            predictions,
            report_path=report,
            progress=progress("queries"),
            enricher=enricher,
            phrasing=phrasing,
            reading=reading,
        )
        typer.echo(format_console(result))


_Judges = Annotated[
    list[str] | None,
    typer.Option(
        help="NAME=DIR: read dataset NAME's evidence with the capability judge in DIR (one `lab judge` "
        "trained without its family); repeatable"
    ),
]


@lab.command()
def calibrate(
    datasets: Annotated[
        list[str],
        typer.Argument(help=DATASETS_HELP + ", or NAME=PATH (one NAME, one dataset); each weighs the same"),
    ],
    out: Annotated[Path, typer.Option(help="Where to write the calibration JSON")],
    holdout: Annotated[
        list[str] | None,
        typer.Option(help="Datasets never fitted on, scored with the result (repeat the option)"),
    ] = None,
    version: Annotated[str, typer.Option(help="Version name stored in the file")] = "confidence-v2",
    folds: Annotated[int, typer.Option(min=2, help="Cross-validation folds, grouped by catalog")] = 5,
    jobs: Annotated[int, typer.Option(min=1, help="Worker processes resolving the catalogs' queries")] = 1,
    judge: _Judges = None,
) -> None:
    """Fit the confidence (P(top power right), P(a right power in the top three)) on labelled queries
    of many catalogs, some of them unanswerable; report cross-validated and hold-out figures."""
    from eval.fitting.calibrate import calibrate as fit_calibration
    from eval.fitting.calibrate_evidence import parse_judges
    from eval.fitting.calibrate_file import write_calibration
    from services.root.container import enricher_kind

    def labelled_progress(label: str, done: int, total: int) -> None:
        show = progress(label)  # a counter on a terminal, nothing elsewhere
        if show is not None:
            show(done, total)

    with mapped_errors():
        settings = cli_settings()
        held = list(holdout or [])
        calibration, fitted, held_out = fit_calibration(
            settings,
            datasets,
            version=version,
            holdout=held,
            progress=labelled_progress,
            folds=folds,
            jobs=jobs,
            judges=parse_judges(judge or []),
        )
        provenance = {
            "command": "tool-selector lab calibrate "
            + " ".join(str(d) for d in datasets)
            + "".join(f" --holdout {h}" for h in held)
            + f" --out {out} --version {version} --folds {folds}"
            + "".join(f" --judge {j}" for j in judge or []),
            "retrieval": {
                "enricher": enricher_kind(settings, None),
                "alpha": settings.search.alpha,
                "fusion": settings.search.fusion,
                "field_boosts": settings.search.field_boosts,
                "candidates": settings.search.candidates,
                "embedding": settings.embedding.model,
            },
        }
        evidence = write_calibration(calibration, fitted, held_out, out, provenance)
        echo_json({"calibration": str(out), "evidence": str(evidence), **calibration.provenance})


def _phrasings(given: list[str] | None, option: str) -> list[Phrasing]:
    """The phrasings an option names, each once, in order (people's words when none)."""
    wrong = [p for p in given or () if p not in PHRASINGS]
    if wrong:
        raise InvalidInputError(
            f"{option} {wrong[0]!r} is not one of {', '.join(PHRASINGS)}.", hint=f"{option} agent"
        )
    return [p for p in PHRASINGS if p in (given or ["user"])]


@lab.command("calibrate-lodo")
def calibrate_lodo_command(
    datasets: Annotated[
        list[str],
        typer.Argument(help="Dataset folders or roots, as PATH or NAME=PATH (one NAME, one dataset)"),
    ],
    work: Annotated[Path, typer.Option(help="Where the resolved evidence and calibrate-lodo.md/json go")],
    each: Annotated[
        list[Path] | None,
        typer.Option(help="A root whose every folder is a dataset of its own (the personal setups)"),
    ] = None,
    recipe: Annotated[
        list[str] | None, typer.Option(help="Recipes to compare (default: all of calibrate_fit.RECIPES)")
    ] = None,
    phrasing: Annotated[
        list[str] | None,
        typer.Option(
            help="The phrasings each left-out dataset is scored in where it has them, one table each "
            "(repeat the option; default user): user, agent or both, as lab eval's --phrasing"
        ),
    ] = None,
    fit_phrasing: Annotated[
        list[str] | None,
        typer.Option(help="The phrasings the heads are fitted on, where a dataset has them (default user)"),
    ] = None,
    reading: Annotated[Reading, typer.Option(help=READING_HELP)] = "arguments",
    judge: _Judges = None,
) -> None:
    """Leave-one-dataset-out for the confidence: per dataset, fit both heads on the others and score it
    (right server first, ECE, tiers of answerable, unanswerable and ambiguous requests, tier accuracy,
    not_found share); print the table. Scored in another phrasing than people's words, the table and
    its files are named by it (calibrate-lodo-agent.md)."""
    import json

    from eval.fitting.calibrate_evidence import parse_judges
    from eval.fitting.calibrate_fit import RECIPES
    from eval.fitting.calibrate_lodo import collect, datasets_of, run_lodo, table

    def say(line: str) -> None:
        typer.echo(line, err=True)

    with mapped_errors():
        unknown = sorted(set(recipe or ()) - set(RECIPES))
        if unknown:
            raise InvalidInputError(
                f"Unknown recipe {unknown[0]!r}.", hint=f"Choose among: {', '.join(sorted(RECIPES))}."
            )
        scored, fitted = _phrasings(phrasing, "--phrasing"), _phrasings(fit_phrasing, "--fit-phrasing")
        settings = cli_settings()
        examples = collect(
            settings,
            datasets_of(datasets, each or ()),
            work,
            say=say,
            phrasings=[p for p in PHRASINGS if p in scored or p in fitted],
            reading=reading,
            judges=parse_judges(judge or []),
        )
        chosen = [RECIPES[r] for r in recipe] if recipe else list(RECIPES.values())
        for words in scored:
            results = run_lodo(
                examples, settings.confidence.thresholds, chosen, say=say, scored=words, fitted=fitted
            )
            text = table(results)
            name = "calibrate-lodo" if words == "user" else f"calibrate-lodo-{words}"
            name += f"-{reading}" if words == "both" else ""
            (work / f"{name}.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
            (work / f"{name}.md").write_text(text + "\n", encoding="utf-8")
            if scored != ["user"] or fitted != ["user"]:
                read = f" (reading: {reading})" if words == "both" else ""
                typer.echo(f"\nScored in phrasing {words}{read}, fitted on {', '.join(fitted)}:\n")
            typer.echo(text)


@lab.command("tool-order")
def tool_order_command(
    datasets: Annotated[
        list[str] | None,
        typer.Argument(
            help="Dataset folders or roots, as PATH or FAMILY=PATH (sets of one FAMILY are left out together)"
        ),
    ] = None,
    each: Annotated[
        list[Path] | None,
        typer.Option(help="A root whose every folder is a dataset of its own (the personal setups)"),
    ] = None,
    phrasing: Annotated[
        list[str] | None,
        typer.Option(help="The phrasings read where a dataset has them (repeat; default user): user, agent"),
    ] = None,
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: the configured enricher)"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Also write the tables here (Markdown)")] = None,
) -> None:
    """Print, per dataset and phrasing, how often the first of the right power's tools is right under
    several orders of its tools (the fused search's, dense, blends, the action-entity match, the shipped
    order, and one fitted leave-one-dataset-out): within the gold server, and over the activations."""
    from eval.quality.tool_order import ORDERS, collect, datasets_of, figures, fitted_lines, table

    def say(line: str) -> None:
        typer.echo(line, err=True)

    with mapped_errors():
        specs = datasets_of(datasets or [], each or ())
        if not specs:
            raise InvalidInputError("No dataset given.", hint="For example: eval/datasets/gateway-demo")
        cases = collect(cli_settings(), specs, _phrasings(phrasing, "--phrasing"), enricher=enricher, say=say)
        results = figures(cases, ORDERS)
        text = "\n".join(
            [
                "Right tool first within the gold server (its first gold server has two tools or more):",
                "",
                table(results, "within"),
                "",
                "Right tool first over the activations (a right power of two tools or more activated):",
                "",
                table(results, "activations"),
                "",
                *(
                    ["The fitted column's weights, each chosen without its dataset:", *fitted_lines(results)]
                    if any(r.fitted for r in results.values())
                    else []
                ),
            ]
        )
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text + "\n", encoding="utf-8")
        typer.echo(text)


@lab.command("train-ranker")
def train_ranker_command(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP + "; each weighs the same in the fit")],
    out: Annotated[Path, typer.Option(help="Where to write the ranker JSON")],
    version: Annotated[str, typer.Option(help="Version name stored in the file")] = "ranker-v1",
    folds: Annotated[int, typer.Option(min=2, help="Held-back folds, grouped by gold server")] = 5,
    rounds: Annotated[int, typer.Option(min=10, help="Boosting rounds")] = 300,
    max_queries: Annotated[
        int | None,
        typer.Option(min=1, help="At most this many answerable queries per dataset folder (a fixed sample)"),
    ] = None,
) -> None:
    """Fit the learned ranker (LightGBM lambdarank over the fused search's first candidates) on labelled
    queries; print the held-back folds' tool recall beside the fused order's, and write the model."""
    from eval.fitting.train_ranker import train_ranker

    def labelled_progress(label: str, done: int, total: int) -> None:
        show = progress(label)
        if show is not None:
            show(done, total)

    with mapped_errors():
        command = (
            "tool-selector lab train-ranker "
            + " ".join(str(d) for d in datasets)
            + f" --out {out} --version {version} --folds {folds} --rounds {rounds}"
            + (f" --max-queries {max_queries}" if max_queries else "")
        )
        model = train_ranker(
            cli_settings(),
            datasets,
            out=out,
            version=version,
            folds=folds,
            rounds=rounds,
            max_queries=max_queries,
            progress=labelled_progress,
            command=command,
        )
        echo_json({"ranker": str(out), "trees": len(model.ensemble.trees), **model.figures})


@lab.command("replay")
def replay_command(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP)],
    passes: Annotated[int, typer.Option(min=1, max=10, help="Passes over the requests")] = 2,
    rephrased: Annotated[
        bool, typer.Option(help="Later passes read queries-rephrased.jsonl (the same intents reworded)")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seeds each pass's order")] = 0,
    memory: Annotated[bool, typer.Option(help="--no-memory: the same replay with the memory off")] = True,
    phrasing: Annotated[
        str,
        typer.Option(
            help="user (people's words) or agent (the agent's query of each request, queries-agent.jsonl); "
            "a request beside the query waits for the gateway's resolve_intent to take one"
        ),
    ] = "user",
) -> None:
    """A simulated agent drives the gateway service with the datasets' requests, in seeded random order,
    pass after pass; prints per pass (whole, first and last fifth) plain requests activated, activated
    precision and requests nothing serves activated, to measure the memory of confirmed choices."""
    from eval.quality.replay import replay

    with mapped_errors():
        if phrasing not in ("user", "agent"):
            raise InvalidInputError(
                f"--phrasing {phrasing!r} is not one of user, agent.", hint="--phrasing agent"
            )
        found = replay(
            cli_settings(),
            datasets,
            passes=passes,
            rephrased=rephrased,
            seed=seed,
            memory=memory,
            phrasing="agent" if phrasing == "agent" else "user",
            progress=lambda name: typer.echo(f"replayed {name}", err=True),
        )
    header = f"{'dataset':<22} pass  plain act  precision  unans act  remembered  (first fifth / last fifth)"
    lines = [header]
    for name, rows in [*found["datasets"].items(), ("all", found["all"])]:
        for row in rows:
            first, last = row["first_fifth"], row["last_fifth"]
            lines.append(
                f"{name[:22]:<22} {row['pass']:>4}  {row['plain_activated']!s:>9}  "
                f"{row['activated_precision']!s:>9}  {row['unanswerable_activated']!s:>9}  "
                f"{row['remembered']:>10}  ({first['plain_activated']} / {last['plain_activated']})"
            )
    typer.echo("\n".join(lines))
    echo_json(found)


@lab.command("memory-fit")
def memory_fit_command(
    datasets: Annotated[
        list[str], typer.Argument(help="NAME=PATH or PATH: the datasets (a NAME may repeat: one family)")
    ],
    out: Annotated[Path, typer.Option(help="Where to write the judge")] = Path(
        "tool_selector/calibration/memory-v1.json"
    ),
    seed: Annotated[int, typer.Option(help="Seeds each pass's order")] = 0,
    work: Annotated[
        bool, typer.Option(help="Reuse the collected replays kept in the cache folder (memory-fit/)")
    ] = True,
) -> None:
    """Fit the memory's judge on replays of the datasets and judge it leave-one-dataset-out: per dataset,
    fitted on the others and replayed twice with it deciding, beside the replay without memory."""
    from eval.fitting.memory_fit import memory_fit

    with mapped_errors():
        found = memory_fit(
            cli_settings(),
            datasets,
            out,
            seed=seed,
            work=work,
            progress=lambda text: typer.echo(text, err=True),
        )
    echo_json(found)


SHADOW_CATALOGS = [
    "msc=../shared/benchmarks/msc_bench_dev",
    "livemcp=../shared/benchmarks/livemcpbench",
    "metatool=../shared/benchmarks/metatool",
    "toolalpaca=../shared/benchmarks/toolalpaca",
    "restbench=../shared/benchmarks/restbench",
    "gateway-demo=eval/datasets/gateway-demo",
]


@lab.command("train-intent")
def train_intent_command(
    catalogs: Annotated[
        list[str] | None,
        typer.Argument(help="NAME=PATH: real catalog folders whose tools are negatives (default: the six)"),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where to write the head")] = Path(
        "tool_selector/calibration/intent-v2.json"
    ),
    encoder_out: Annotated[
        Path,
        typer.Option(help="Where to write the fine-tuned encoder (int8 ONNX; provenance.json beside it)"),
    ] = Path("tool_selector/embedding/intent_check/encoder.onnx"),
    careful: Annotated[Path, typer.Option(help="The team's attacks and hard negatives")] = Path(
        "eval/datasets/careful-attacks"
    ),
    poison: Annotated[Path, typer.Option(help="A labelled corpus judged at the end, never fitted on")] = Path(
        "../shared/benchmarks/poison/corpus.jsonl"
    ),
    judge: Annotated[
        bool,
        typer.Option(
            "--judge-only",
            help="Fit nothing: judge the check at --out and --encoder-out on the set's holdout "
            "(holdout.jsonl) and the corpus",
        ),
    ] = False,
) -> None:
    """Fine-tune the scanner's learned check (what a definition asks the model to do: an encoder and its
    head) and judge it leave one kind out; prints per kind the share caught by the check, the rules and
    either, and the share of hard negatives and of each catalog's tools flagged and held (about an hour
    on two cores; the train extra)."""
    from eval.intent.train import judge_only, train_intent
    from tool_selector.embedding.intent import build_check
    from tool_selector.trust.intent import load_intent_model

    if judge:
        with mapped_errors():
            echo_json(
                judge_only(build_check(load_intent_model(out), encoder_out, threads=2), careful, poison)
            )
        return

    pairs = {}
    for given in catalogs or SHADOW_CATALOGS:
        name, sep, path = given.partition("=")
        if not sep:
            raise typer.BadParameter(f"{given!r} is not NAME=PATH.")
        pairs[name] = Path(path)
    with mapped_errors():
        found = train_intent(
            out,
            encoder_out=encoder_out,
            careful=careful,
            catalogs=pairs,
            poison=poison,
            work=cli_settings().cache_dir / "train-intent",
            say=lambda text: typer.echo(text, err=True),
        )
    echo_json(found)


@lab.command("shadow-fit")
def shadow_fit_command(
    catalogs: Annotated[
        list[str] | None,
        typer.Argument(
            help="NAME=PATH: real catalog folders whose sentences are the negatives (default: the six)"
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where to write the classifier")] = Path(
        "tool_selector/calibration/shadow-v1.json"
    ),
    claims: Annotated[Path, typer.Option(help="The written claims, one a line")] = Path(
        "eval/datasets/shadowing/claims.txt"
    ),
) -> None:
    """Fit the shadowing check's claim classifier and judge it leave-one-dataset-out: per catalog, fitted
    without its sentences, the tools it would hold there with every server configured."""
    from eval.fitting.shadow_fit import shadow_fit

    pairs = []
    for given in catalogs or SHADOW_CATALOGS:
        name, sep, path = given.partition("=")
        if not sep:
            raise typer.BadParameter(f"{given!r} is not NAME=PATH.")
        pairs.append((name, Path(path)))
    with mapped_errors():
        found = shadow_fit(
            pairs,
            out,
            claims=claims,
            cache=cli_settings().cache_dir / "shadow-fit" / "vectors.npz",
            progress=lambda text: typer.echo(text, err=True),
        )
    echo_json(found)
