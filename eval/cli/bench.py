"""The benchmark commands: ``lab bench``, ``bench-sync``, ``bench-gateway``, ``bench-api``, ``bench-scan``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eval.cli.app import lab
from routes.cli.base import EnricherChoice, cli_settings, echo_json, mapped_errors
from tool_selector.core.errors import InvalidInputError

_SHARED = Path("../shared/benchmarks")


@lab.command()
def bench(
    dataset: Annotated[
        Path, typer.Argument(help="A benchmark folder: its catalog is indexed, its queries timed")
    ],
    queries: Annotated[int, typer.Option(help="How many queries to time")] = 300,
    build: Annotated[bool, typer.Option(help="Also time an index build from scratch")] = True,
    memory: Annotated[
        int, typer.Option(min=0, help="Also time the memory's part of a decision with this many choices")
    ] = 0,
) -> None:
    """Print resolve latency (warm, in-process), index build time and peak memory; with --memory N, the
    gateway memory's part of a decision with N remembered choices beside the resolve."""
    from eval.bench.resolve import bench as run_bench

    with mapped_errors():
        echo_json(run_bench(cli_settings(), dataset, queries=queries, build=build, memory=memory))


@lab.command("bench-sync")
def bench_sync_command(
    servers: Annotated[Path | None, typer.Option(help="A server configuration to discover live")] = None,
    catalog: Annotated[Path | None, typer.Option(help="Or a catalog folder imported from file")] = None,
    enricher: Annotated[EnricherChoice, typer.Option(help="offline, claude or none")] = "offline",
) -> None:
    """Print the time of a first and a no-change `tool-selector sync` in a fresh data folder."""
    from eval.bench.sync import bench_sync

    with mapped_errors():
        if (servers is None) == (catalog is None):
            raise InvalidInputError(
                "Give --servers FILE or --catalog DIR.",
                hint="For example --servers examples/demo-servers.json.",
            )
        echo_json(bench_sync(cli_settings(), servers_file=servers, catalog=catalog, enricher=enricher))


@lab.command("bench-gateway")
def bench_gateway_command(
    servers: Annotated[Path, typer.Option(help="The server configuration to sync and serve")],
    queries: Annotated[Path, typer.Option(help="One query a line, or a benchmark queries.jsonl")],
    power: Annotated[str, typer.Option(help="The configured server whose activation is timed")] = "time",
    calls: Annotated[int, typer.Option(help="How many resolve_intent calls to time")] = 200,
    rounds: Annotated[int, typer.Option(help="How many activations to time")] = 7,
) -> None:
    """Time the gateway over stdio: resolve_intent round trips, activation overhead, tokens saved."""
    from eval.bench.gateway import bench_gateway
    from services.gateway.tokens import read_queries

    with mapped_errors():
        settings = cli_settings()
        texts = read_queries(queries, limit_bytes=settings.max_file_bytes)
        echo_json(bench_gateway(settings, servers, texts, power=power, calls=calls, rounds=rounds))


@lab.command("bench-cold-start")
def bench_cold_start_command(
    data: Annotated[Path, typer.Option(help="A synced data folder (copied; the copy is served)")] = Path(
        "data/demo"
    ),
    servers: Annotated[Path, typer.Option(help="Its server configuration")] = Path(
        "examples/demo-servers.json"
    ),
    query: Annotated[
        str, typer.Option(help="The first resolve_intent request: one that activates nothing")
    ] = "how do I get red wine out of a carpet",
    rounds: Annotated[int, typer.Option(min=1, help="How many cold starts to time")] = 7,
) -> None:
    """Time `tool-selector serve` from process start to its answer to `initialize` and to its first
    resolve_intent answer, started by the mcp client over stdio, and the command line's start to exit
    (--help, --version, resolve) (the demo data by default: run scripts/demo.sh first)."""
    from eval.bench.gateway import bench_cold_start

    with mapped_errors():
        if not (data / "catalog.db").is_file():
            raise InvalidInputError(
                f"{data} holds no catalog.", hint="Run bash scripts/demo.sh first, or pass --data DIR."
            )
        echo_json(bench_cold_start(cli_settings(), data, servers, query, rounds=rounds))


@lab.command("bench-api")
def bench_api_command(
    catalog: Annotated[Path, typer.Option(help="A catalog folder (servers.json, tools.json)")] = Path(
        "eval/datasets/gateway-demo"
    ),
    queries: Annotated[Path | None, typer.Option(help="queries.jsonl (default: the catalog's own)")] = None,
    clients: Annotated[int, typer.Option(min=1, max=256, help="Concurrent closed-loop clients")] = 16,
    seconds: Annotated[float, typer.Option(min=1, help="How long to load the API")] = 30.0,
    workers: Annotated[int, typer.Option(min=1, max=64, help="`tool-selector api --workers N`")] = 1,
) -> None:
    """Start `tool-selector api` on a fresh copy of a catalog and load POST /api/v1/resolve; prints
    requests/s, p50/p95/p99 latency, errors, the server's peak memory (summed over its workers) and
    each worker's CPU seconds under load."""
    from eval.bench.api import bench_api

    with mapped_errors():
        echo_json(
            bench_api(
                cli_settings(),
                catalog=catalog,
                queries_file=queries or catalog / "queries.jsonl",
                clients=clients,
                seconds=seconds,
                workers=workers,
            )
        )


@lab.command("bench-scan")
def bench_scan_command(
    corpus: Annotated[
        Path, typer.Option(help="A labelled JSON-lines corpus (label, attack per line)")
    ] = _SHARED / "poison" / "corpus.jsonl",
    catalog: Annotated[
        list[Path] | None,
        typer.Option(help="A real catalog folder whose tools should stay clean (repeatable)"),
    ] = None,
    classifier: Annotated[
        bool,
        typer.Option(
            "--classifier",
            help="Also cross-validate a learned classifier (embeddings + logistic regression) against rules",
        ),
    ] = False,
    rules_only: Annotated[
        bool,
        typer.Option(
            "--rules-only", help="The rules alone, without the learned check (as scan --rules-only)"
        ),
    ] = False,
) -> None:
    """The scanner's figures: detection per attack category on the corpus, false positives on the
    corpus's benign items and on real catalogs, and seconds to scan each catalog. Defaults: the
    shared benchmarks next to the repository (../shared/benchmarks: poison/, msc_bench_dev/,
    livemcpbench/). With --classifier, the learned-classifier experiment too (loads the embedding
    model; a minute or so)."""
    from eval.bench.scan import bench_scan

    folders = catalog or [_SHARED / "msc_bench_dev", _SHARED / "livemcpbench"]
    with mapped_errors():
        settings = cli_settings()
        intent = None
        if not rules_only:
            from tool_selector.embedding.intent import intent_check

            intent = intent_check(threads=settings.embedding.threads)
        figures = bench_scan(corpus, folders, limit_bytes=settings.max_file_bytes, intent=intent)
        if classifier:
            from eval.bench.scan_classifier import classifier_experiment

            figures["classifier"] = classifier_experiment(
                settings, corpus, folders, limit_bytes=settings.max_file_bytes
            )
        echo_json(figures)


@lab.command("conversation")
def conversation_command(
    datasets: Annotated[
        list[Path], typer.Argument(help="Dataset folders of requests in conversation order (queries.jsonl)")
    ],
    servers: Annotated[Path, typer.Option(help="The server configuration to sync and serve")] = Path(
        "examples/demo-servers.json"
    ),
    catalog: Annotated[Path, typer.Option(help="Benchmark folder of those servers' tools")] = Path(
        "eval/datasets/gateway-demo"
    ),
    beside: Annotated[
        Path | None, typer.Option(help="A catalog folder imported beside them (catalog-only servers)")
    ] = None,
    phrasing: Annotated[
        str, typer.Option(help="user (the person's words), agent (agent_query) or both (query + request)")
    ] = "user",
    turns: Annotated[bool, typer.Option(help="Also print each request's turn")] = False,
) -> None:
    """One real `serve` session over each dataset's requests with a scripted agent: the context it holds
    against loading every tool, answer tokens, tools listed at the end, and whether the next step named a
    right tool with its required arguments."""
    from eval.bench.conversation import bench_conversation

    with mapped_errors():
        if phrasing not in ("user", "agent", "both"):
            raise InvalidInputError(
                f"--phrasing {phrasing!r} is not one of user, agent, both.", hint="--phrasing agent"
            )
        settings = cli_settings()
        for dataset in datasets:
            report = bench_conversation(
                settings,
                dataset,
                servers_file=servers,
                catalog=catalog,
                beside=beside,
                phrasing=phrasing,  # type: ignore[arg-type]
            )
            if not turns:
                report.pop("turns")
            echo_json({"dataset": str(dataset), **report})


@lab.command("drive")
def drive_command(
    calls: Annotated[
        Path, typer.Argument(help='A jsonl of gateway calls: {"tool": ..., "arguments": {...}} a line')
    ],
    workdir: Annotated[Path, typer.Option(help="Kept between runs: the synced data folder")] = Path(
        "/tmp/ts-drive"
    ),
    servers: Annotated[Path, typer.Option(help="The server configuration to sync and serve")] = Path(
        "examples/demo-servers.json"
    ),
    beside: Annotated[
        Path | None, typer.Option(help="A catalog folder imported beside them (catalog-only servers)")
    ] = None,
) -> None:
    """Play the agent: replay a script of gateway calls in one real `serve` session (in the demo sandbox)
    and print what the agent reads after each call, with its tokens and the tool list."""
    from eval.bench.drive import drive

    with mapped_errors():
        typer.echo(drive(cli_settings(), calls, workdir=workdir, servers_file=servers, beside=beside))


@lab.command("fill-arguments")
def fill_arguments_command(
    dataset: Annotated[
        Path, typer.Argument(help="A folder of examples.jsonl and tools.json (argument-fill)")
    ],
    tools: Annotated[
        list[Path] | None, typer.Option(help="More catalogs (tools.json) the lines name")
    ] = None,
    now: Annotated[
        str,
        typer.Option(help="Relative dates are read against it where a line has no now (2026-11-20T10:00)"),
    ] = "",
    errors: Annotated[bool, typer.Option(help="Also list every example not exactly right")] = False,
) -> None:
    """Score the argument filler: per example and per parameter exact match, and missing's precision."""
    from datetime import datetime

    from eval.bench.fill_arguments import DEFAULT_NOW, load, render, score

    with mapped_errors():
        try:
            moment = datetime.fromisoformat(now) if now else DEFAULT_NOW
        except ValueError as error:
            raise InvalidInputError(
                f"--now {now!r} is no ISO date-time", hint="--now 2026-11-20T10:00:00"
            ) from error
        examples, schemas = load(dataset, tools or [])
        typer.echo(render(score(examples, schemas, moment), errors=errors))


_SHADOW_CATALOGS = [
    ("msc_bench_dev", _SHARED / "msc_bench_dev"),
    ("livemcpbench", _SHARED / "livemcpbench"),
    ("metatool", _SHARED / "metatool"),
    ("toolalpaca", _SHARED / "toolalpaca"),
    ("restbench", _SHARED / "restbench"),
    ("demo-catalog", Path("examples/demo-catalog")),
    ("gateway-demo", Path("eval/datasets/gateway-demo")),
    *(
        (f"personal-setups/{name}", Path("eval/datasets/personal-setups") / name)
        for name in (
            "backend-dev",
            "data-platform",
            "grad-student",
            "home-finance",
            "product-manager",
            "shop-owner",
        )
    ),
]


@lab.command("bench-shadowing")
def bench_shadowing_command(
    attacks: Annotated[Path, typer.Option(help="The attacks (JSON lines)")] = Path(
        "eval/datasets/shadowing/attacks.jsonl"
    ),
    configured: Annotated[
        Path, typer.Option(help="The catalog the attacks' targets are configured in")
    ] = Path("eval/datasets/gateway-demo"),
    catalog: Annotated[
        list[Path] | None,
        typer.Option(help="A real catalog folder, every server configured (repeatable; default: all)"),
    ] = None,
    writes: Annotated[bool, typer.Option(help="Also time a sync's write and a catalog import")] = False,
    import_size: Annotated[int, typer.Option(help="Tools of the timed catalog import")] = 1000,
) -> None:
    """The shadowing check by meaning: attacks caught (rules, check, both), tools held on real catalogs
    with every server configured, and with --writes the seconds it adds to a sync and an import."""
    from eval.bench.shadowing import bench_shadowing

    folders = [(p.name, p) for p in catalog] if catalog else _SHADOW_CATALOGS
    with mapped_errors():
        echo_json(
            bench_shadowing(
                cli_settings(),
                attacks,
                configured,
                folders,
                writes=writes,
                other_catalog=_SHARED / "msc_bench_dev",
                import_size=import_size,
            )
        )
