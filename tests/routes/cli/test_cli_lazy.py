"""The console script registers only the module of the command it runs (routes/cli/__init__.py): the map
covers every command of the whole app, and ``serve`` starts without the other commands' services."""

from __future__ import annotations

import subprocess
import sys

import typer.main

from routes.cli import COMMANDS, MODULES, full_app


def test_the_map_names_every_top_level_command_and_group() -> None:
    group = typer.main.get_command(full_app())
    assert isinstance(group, typer.main.TyperGroup)
    assert set(group.commands) == set(COMMANDS)
    assert {m for m in COMMANDS.values() if m} <= set(MODULES)


# what a command imports when it runs, never when it is registered or listed by --help
HEAVY = ("services", "pydantic_settings", "numpy", "scipy", "onnxruntime", "mcp", "fastapi", "weaviate")


def test_each_mapped_command_is_registered_by_its_module_alone_without_its_services() -> None:
    script = (
        "import sys, typer.main\n"
        "from routes.cli import COMMANDS, _register\n"
        "group = typer.main.get_command(_register(COMMANDS[sys.argv[1]]))\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print(sys.argv[1] in group.commands, heavy)\n"
    )
    for command in ("serve", "resolve", "catalog", "keys", "init", "lab"):
        done = subprocess.run(
            [sys.executable, "-c", script, command], capture_output=True, text=True, check=True, timeout=120
        )
        assert done.stdout.strip() == "True []", (command, done.stdout, done.stderr)


def test_help_lists_every_command_without_importing_what_the_commands_run() -> None:
    """``tool-selector --help`` registers the whole app: no command module imports its services, the
    settings or the mcp SDK to be listed (issue 42: --help took 1.2 s)."""
    script = (
        "import sys, io, contextlib\n"
        "from routes.cli import main\n"
        "sys.argv = ['tool-selector', '--help']\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print(' serve ' in out.getvalue() and ' lab ' in out.getvalue(), heavy)\n"
    )
    run = [sys.executable, "-c", script]
    done = subprocess.run(run, capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "True []", (done.stdout, done.stderr)


def test_help_and_a_mistyped_command_get_the_whole_app() -> None:
    code = "import sys; from routes.cli import main; sys.argv[0] = 'tool-selector'; main()"
    run = [sys.executable, "-c", code]
    listed = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0
    assert all(f" {name} " in listed.stdout for name in ("init", "serve", "quarantine", "lab"))
    wrong = subprocess.run([*run, "serv"], capture_output=True, text=True, timeout=120, check=False)
    assert wrong.returncode == 2 and "No such command" in wrong.stderr and "serve" in wrong.stderr


def test_version_prints_the_installed_version_and_exits() -> None:
    from importlib import metadata

    code = "import sys; from routes.cli import main; sys.argv[0] = 'tool-selector'; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tool-selector {metadata.version('tool-selector')}"
