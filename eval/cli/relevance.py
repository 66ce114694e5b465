"""``lab lodo``, ``lab train-relevance``, ``lab cross-encoder`` and ``lab tool-text``: judge and make the
relevance model (needs the train extra)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from eval.cli.app import lab
from routes.cli.base import cli_settings, mapped_errors

_SHARED = Path("../shared/benchmarks")


# the options every leave-one-dataset-out command takes
_Shared = Annotated[Path, typer.Option(help="The shared benchmarks folder")]
_Sets = Annotated[
    list[str] | None, typer.Option("--set", help="Datasets under --shared to use (default: all five)")
]
_Team = Annotated[
    Path | None, typer.Option(help="The team's personal setups (default: eval/datasets/personal-setups)")
]
_NoTeam = Annotated[bool, typer.Option("--no-team", help="Leave the team's setups out entirely")]
_Only = Annotated[list[str] | None, typer.Option(help="Run only these folds (dataset names); repeatable")]
_MaxSteps = Annotated[int | None, typer.Option(min=1, help="Cap training steps per fold (a quick look)")]
_LodoWork = Annotated[Path, typer.Option(help="A `lab lodo` work folder (its folds and predictions read)")]


def _team_dir(team: Path | None, no_team: bool) -> Path | None:
    """The team's setups folder the options name: none with --no-team, else --team or the default."""
    from eval.relevance.lodo import team_dir_default

    return None if no_team else (team or team_dir_default())


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@lab.command("lodo")
def lodo_command(
    work: Annotated[Path, typer.Option(help="Where fold models, predictions and lodo.json/lodo.md go")],
    shared: _Shared = _SHARED,
    sets: _Sets = None,
    team: _Team = None,
    no_team: _NoTeam = False,
    only: _Only = None,
    max_steps: _MaxSteps = None,
    extra: Annotated[
        list[Path] | None,
        typer.Option(
            help="A dataset folder that only trains (repeat; e.g. the team's requests exported by "
            "eval/datasets/team-requests/check.py): never left out or scored"
        ),
    ] = None,
) -> None:
    """Leave-one-dataset-out: per dataset, train the relevance model without it and score it under
    today's ranking and the candidates; print the table and the ship rule (mean up, no set down >0.01)."""
    from eval.relevance.lodo import SHARED, run_lodo, table

    with mapped_errors():
        team_dir = _team_dir(team, no_team)
        results = run_lodo(
            cli_settings(),
            shared,
            team_dir,
            work,
            only=only or (),
            sets=sets or SHARED,
            max_steps=max_steps,
            extras=extra or (),
            say=_say,
        )
        text = table(results)
        (work / "lodo.md").write_text(text + "\n", encoding="utf-8")
        print(text)


@lab.command("train-relevance")
def train_relevance_command(
    out: Annotated[Path, typer.Option(help="The folder the model, its licence and provenance go to")],
    work: Annotated[Path, typer.Option(help="Scratch folder (mined negatives, checkpoint)")],
    lodo: Annotated[
        Path | None, typer.Option(help="A `lab lodo` result (lodo.json) to store with the model's provenance")
    ] = None,
    shared: Annotated[Path, typer.Option(help="The shared benchmarks folder")] = _SHARED,
    team: Annotated[Path | None, typer.Option(help="The team's personal setups")] = None,
    int8_tolerance: Annotated[
        float, typer.Option(min=0.0, help="Largest tool R@5 the int8 export may lose on a shared set")
    ] = 0.005,
    wise: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="How far the weights go from the base model's to the trained ones (WiSE-FT); 1: as trained "
            "(what ships: `lab lodo`'s `wise + arguments` row did not carry over better)",
        ),
    ] = 1.0,
    extra: Annotated[
        list[Path] | None,
        typer.Option(help="A dataset folder that only trains (repeat), as `lab lodo --extra` used it"),
    ] = None,
    max_steps: Annotated[
        int | None, typer.Option(min=1, help="The recipe's step budget; the LODO run must have used it")
    ] = None,
) -> None:
    """Train the shipped relevance model on every dataset, export it to int8 ONNX with its tokenizer,
    licence and provenance (datasets and sha256, steps, losses, the LODO table)."""
    from eval.relevance.lodo import team_dir_default
    from eval.relevance.ship import ship

    with mapped_errors():
        ship(
            cli_settings(),
            shared,
            team or team_dir_default(),
            out,
            work,
            lodo_file=lodo,
            int8_tolerance=int8_tolerance,
            wise=wise,
            extras=extra or [],
            max_steps=max_steps,
            say=_say,
        )


@lab.command("cross-encoder")
def cross_encoder_command(
    work: Annotated[Path, typer.Option(help="Where the fold cross-encoders and cross.json/cross.md go")],
    lodo_work: _LodoWork,
    ranking: Annotated[
        str, typer.Option(help="The `lab lodo` configuration whose predictions are rescored")
    ] = "model + arguments",
    shared: _Shared = _SHARED,
    sets: _Sets = None,
    team: _Team = None,
    no_team: _NoTeam = False,
    only: _Only = None,
    max_steps: _MaxSteps = None,
) -> None:
    """Leave-one-dataset-out: per dataset, train a cross-encoder without it and rescore the first
    candidates of its `lab lodo` predictions; print the figures as ranked and rescored, and the ship rule."""
    from eval.relevance.cross import run_cross, table
    from eval.relevance.lodo import SHARED

    with mapped_errors():
        results = run_cross(
            cli_settings(),
            shared,
            _team_dir(team, no_team),
            work,
            lodo_work=lodo_work,
            ranking=ranking,
            only=only or (),
            sets=sets or SHARED,
            max_steps=max_steps,
            say=_say,
        )
        text = table(results)
        (work / "cross.md").write_text(text + "\n", encoding="utf-8")
        print(text)


@lab.command("tool-text")
def tool_text_command(
    work: Annotated[Path, typer.Option(help="Where the fold models and tool-text.json/tool-text.md go")],
    lodo_work: _LodoWork,
    kind: Annotated[
        list[str] | None,
        typer.Option("--text", help="Tool texts to measure: plain, parameters, enriched (default: all)"),
    ] = None,
    shared: _Shared = _SHARED,
    sets: _Sets = None,
    team: _Team = None,
    no_team: _NoTeam = False,
    only: _Only = None,
    max_steps: _MaxSteps = None,
) -> None:
    """Leave-one-dataset-out: per tool text (plain, with parameter names, with enrichment's action-entity
    pairs too), train the relevance model without each dataset and score its dense channel on it; print
    the table and the ship rule of each text against the plain one."""
    from eval.relevance.data import TOOL_TEXTS
    from eval.relevance.lodo import SHARED
    from eval.relevance.tooltext import run_tool_text, table

    with mapped_errors():
        results = run_tool_text(
            cli_settings(),
            shared,
            _team_dir(team, no_team),
            work,
            lodo_work=lodo_work,
            kinds=kind or TOOL_TEXTS,
            only=only or (),
            sets=sets or SHARED,
            max_steps=max_steps,
            say=_say,
        )
        text = table(results)
        (work / "tool-text.md").write_text(text + "\n", encoding="utf-8")
        print(text)


@lab.command("judge")
def judge_command(
    out: Annotated[
        Path, typer.Option(help="The folder the judge is written to (judge.onnx, head.json, ...)")
    ],
    leave_out: Annotated[
        list[str] | None, typer.Option(help="A family of the team's requests to train without; repeatable")
    ] = None,
    leave_out_setups: Annotated[
        bool, typer.Option(help="Train without every server of the team's personal setups")
    ] = False,
    layers: Annotated[int, typer.Option(min=1, max=6, help="Layers of all-MiniLM-L6-v2 kept")] = 6,
    steps: Annotated[int, typer.Option(min=1, help="Training steps (batches of 32)")] = 500,
    shared: _Shared = _SHARED,
) -> None:
    """Train the capability judge on the team's requests (without the families left out), export it as
    int8 ONNX, and print its held-out AUC against the relevance model's cosine on what it never saw."""
    import json

    from eval.relevance.judge import held_out_check, run_judge
    from tool_selector.embedding.embedders import relevance_embedder

    with mapped_errors():
        settings = cli_settings()
        embedder = relevance_embedder(threads=settings.embedding.threads)
        left = leave_out or []
        provenance = run_judge(
            shared,
            out,
            embedder,
            leave_out=left,
            leave_out_setups=leave_out_setups,
            layers=layers,
            steps=steps,
            say=_say,
        )
        if left or leave_out_setups:
            figures = held_out_check(out, shared, embedder, leave_out=left, leave_out_setups=leave_out_setups)
            provenance["held_out"] = figures
            (out / "provenance.json").write_text(json.dumps(provenance, indent=1), encoding="utf-8")
            for name, row in figures.items():
                print(
                    f"{name:40s} n={row['examples']:5d}  cosine AUC {row['cosine_auc']}  "
                    f"judge AUC {row['judge_auc']}"
                )
