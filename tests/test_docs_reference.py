"""The generated references (docs/reference/cli.md, docs/reference/settings.md) match the code: CI fails
when a command, an option or a setting changed and `python scripts/gen_docs.py` was not run."""

from __future__ import annotations

import shutil
import sys
from functools import cache
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from tests.support.gen_docs import gen_docs
from tests.support.paths import ROOT

RUN = "python scripts/gen_docs.py"


@cache
def rendered() -> dict[Path, str]:
    return dict(gen_docs().render())


def test_the_checked_in_cli_and_settings_references_are_what_the_code_generates() -> None:
    stale = gen_docs().stale(ROOT, rendered())
    assert not stale, (
        f"{', '.join(map(str, stale))} differ from the code. Run `{RUN}` and commit the result.\n\n"
        + "\n\n".join(stale.values())
    )


def test_check_mode_fails_naming_the_command_to_run_when_a_reference_is_out_of_date(tmp_path: Path) -> None:
    for relative, text in rendered().items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    said: list[str] = []
    assert gen_docs().main(["--check"], root=tmp_path, echo=said.append) == 0
    settings_doc = tmp_path / "docs" / "reference" / "settings.md"
    settings_doc.write_text(settings_doc.read_text(encoding="utf-8").replace("`alpha`", "`beta`"))
    said.clear()
    assert gen_docs().main(["--check"], root=tmp_path, echo=said.append) == 1
    assert "docs/reference/settings.md is out of date" in said[0]
    assert f"Run `{RUN}`" in said[-1]


def test_writing_the_references_creates_them_where_check_mode_looks(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("reference"))
    assert gen_docs().main([], root=tmp_path, echo=lambda _: None) == 0
    assert gen_docs().main(["--check"], root=tmp_path, echo=lambda _: None) == 0


def _leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += _leaves(annotation, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def test_the_settings_reference_has_a_row_for_every_setting_nested_ones_included() -> None:
    from tool_selector.config.settings import Settings

    text = rendered()[Path("docs/reference/settings.md")]
    missing = [name for name in _leaves(Settings) if f"| `{name}` |" not in text]
    assert not missing, f"settings without a row: {missing}"


def test_the_cli_reference_has_a_section_for_every_command_and_every_option() -> None:
    text = rendered()[Path("docs/reference/cli.md")]
    for path, options in gen_docs().cli_commands().items():
        if len(path) > 1:
            assert f"\n## {' '.join(path)}\n" in text, f"no section for {' '.join(path)}"
        for option in options - {"--help"}:
            assert f"`{option}`" in text, f"{' '.join(path)} {option} is not in the reference"


# -- the settings generator on a model of its own: flat and nested, names from the model's config ---


class _Group(BaseModel):
    """A group of settings."""

    url: str = Field(default="http://localhost:1", description="an address")
    tries: int = Field(default=3, ge=1, le=10)
    token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("token", "GROUP_TOKEN"))


class _Toy(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TOY_", env_nested_delimiter="__", extra="forbid")

    mode: Literal["a", "b"] = Field(default="a", description="which one")
    ratio: float = Field(default=0.5, ge=0, le=1)
    legacy_url: str = Field(
        default="x", validation_alias=AliasChoices("TOY_LEGACY_URL", "OLD_URL"), description="flat, aliased"
    )
    group: _Group = Field(default_factory=_Group)


@pytest.fixture
def toy_entries() -> dict[str, Any]:
    module = gen_docs()
    return {s.dotted: s for s, _ in module.settings_entries(_Toy, sys.modules[__name__])}


def test_the_generator_takes_names_from_the_prefix_the_delimiter_and_the_aliases(
    toy_entries: dict[str, Any],
) -> None:
    assert toy_entries["mode"].env == ["TOY_MODE"]
    assert toy_entries["legacy_url"].env == ["TOY_LEGACY_URL", "OLD_URL"]
    assert toy_entries["group.url"].env == ["TOY_GROUP__URL"]
    assert toy_entries["group.tries"].env == ["TOY_GROUP__TRIES"]
    assert toy_entries["group"].env == ["TOY_GROUP"]


def test_the_generator_lists_only_names_that_really_set_the_setting(toy_entries: dict[str, Any]) -> None:
    # "GROUP_TOKEN" is a nested field's alias: pydantic-settings reads it as TOY_GROUP__GROUP_TOKEN, never
    # as a variable of its own, and "OLD_URL" (a literal of this module) sets only legacy_url
    assert "GROUP_TOKEN" not in toy_entries["group.token"].env
    assert toy_entries["group.token"].env[0] == "TOY_GROUP__TOKEN"
    assert "OLD_URL" not in toy_entries["group.url"].env


def test_the_settings_reference_of_a_model_shows_types_defaults_constraints_and_descriptions() -> None:
    text = gen_docs().render_settings(_Toy, sys.modules[__name__])
    assert "| `mode` | `TOY_MODE` | `a` or `b` | `a` | which one |" in text
    assert "| `ratio` | `TOY_RATIO` | number, ≥ 0, ≤ 1 | `0.5` |  |" in text
    assert "## group\n\nA group of settings." in text
    assert "| `group.token` |" in text
