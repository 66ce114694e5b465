"""Settings grouped by stage, one module a group, and the flat names of before read as the grouped ones."""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from tool_selector.config import settings as settings_module
from tool_selector.config.settings import GROUPS, RENAMED, Settings, load_settings
from tool_selector.core.errors import ConfigurationError

LOGGER = "tool_selector.config.settings"


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings_module, "_warned", set())  # each test sees its own first warning


def test_every_group_is_a_module_of_its_own_named_as_the_group() -> None:
    for group, model in GROUPS.items():
        assert model.__module__ == f"tool_selector.config.{group}", (group, model.__module__)
        assert Settings.model_fields[group].annotation is model
    assert set(GROUPS) >= {"embedding", "search", "confidence", "sync"}


def test_the_top_level_keeps_only_what_every_stage_shares() -> None:
    top = {name for name in Settings.model_fields if name not in GROUPS}
    assert top == {
        "data_dir",
        "cache_dir",
        "servers_file",
        "backend",
        "max_file_bytes",
        "index_check_s",
        "write_lock_timeout_s",
        "log_level",
    }


def test_every_old_flat_name_names_a_field_of_its_group_and_none_is_a_top_level_field() -> None:
    for old, (group, field) in RENAMED.items():
        assert field in GROUPS[group].model_fields, (old, group, field)
        assert old not in Settings.model_fields, old


@pytest.mark.parametrize(
    ("old", "value", "group", "field", "read"),
    [
        ("TOOL_SELECTOR_ALPHA", "0.3", "search", "alpha", 0.3),
        ("TOOL_SELECTOR_ENRICHER", "offline", "sync", "enricher", "offline"),
        ("TOOL_SELECTOR_EMBEDDING_THREADS", "3", "embedding", "threads", 3),
        ("TOOL_SELECTOR_JUDGE", "false", "confidence", "judge", False),
        ("TOOL_SELECTOR_FIELD_BOOSTS", json.dumps({"name": 2.0}), "search", "field_boosts", {"name": 2.0}),
    ],
)
def test_an_old_environment_name_is_read_as_its_grouped_setting_with_a_warning_naming_the_new_name(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    old: str,
    value: str,
    group: str,
    field: str,
    read: object,
) -> None:
    monkeypatch.setenv(old, value)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        settings = Settings()
    assert getattr(getattr(settings, group), field) == read
    new = f"TOOL_SELECTOR_{group.upper()}__{field.upper()}"
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
        f"{old} is the old name of the setting {group}.{field}; it is read for now: rename it to {new}"
    ]


def test_an_old_nested_environment_name_is_read_into_the_grouped_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_THRESHOLDS__ACTIVATED", "0.9")
    monkeypatch.setenv("TOOL_SELECTOR_CONFIDENCE__THRESHOLDS__WEAK_MATCHES", "0.1")
    thresholds = Settings().confidence.thresholds
    assert (thresholds.activated, thresholds.weak_matches) == (0.9, 0.1)


def test_the_grouped_name_wins_over_the_old_one_and_a_keyword_over_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_ALPHA", "0.2")
    monkeypatch.setenv("TOOL_SELECTOR_SEARCH__ALPHA", "0.7")
    assert Settings().search.alpha == 0.7
    assert Settings(search={"alpha": 0.1}).search.alpha == 0.1
    monkeypatch.delenv("TOOL_SELECTOR_SEARCH__ALPHA")
    assert Settings().search.alpha == 0.2


def test_a_settings_file_of_before_with_flat_keys_and_a_thresholds_table_still_applies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(
        'alpha = 0.4\nenricher = "none"\n[thresholds]\nactivated = 0.95\n[search]\nfusion = "ranked"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("TOOL_SELECTOR_CONFIG_FILE", str(config))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        settings = load_settings()
    assert (settings.search.alpha, settings.search.fusion) == (0.4, "ranked")
    assert settings.sync.enricher == "none"
    assert settings.confidence.thresholds.activated == 0.95
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "alpha is the old name of the setting search.alpha" in warned
    assert "rename it to confidence.thresholds (settings file)" in warned


def test_a_malformed_old_json_value_is_a_configuration_error_naming_the_new_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_FIELD_BOOSTS", "{name: 2")
    with pytest.raises(ConfigurationError) as info:
        load_settings()
    assert "TOOL_SELECTOR_FIELD_BOOSTS is not JSON" in str(info.value)
    assert "TOOL_SELECTOR_SEARCH__FIELD_BOOSTS" in (info.value.hint or "")


def test_an_invalid_value_is_named_by_its_setting_and_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_ALPHA", "2")
    with pytest.raises(ConfigurationError) as info:
        load_settings()
    assert "search.alpha (TOOL_SELECTOR_SEARCH__ALPHA): Input should be less than or equal to 1" in str(
        info.value
    )


def test_changed_validates_the_new_values_and_leaves_the_original_alone() -> None:
    settings = Settings()
    variant = settings.changed("search", rerank=True, alpha=0.25)
    assert (variant.search.rerank, variant.search.alpha) == (True, 0.25)
    assert (settings.search.rerank, settings.search.alpha) == (False, 0.5)
    with pytest.raises(ValueError, match="less than or equal to 1"):
        settings.changed("search", alpha=3)


def test_the_settings_reference_lists_each_old_name_beside_the_new_one() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "reference" / "settings.md").read_text("utf-8")
    for old, (group, field) in RENAMED.items():
        new = f"TOOL_SELECTOR_{group.upper()}__{field.upper()}"
        row = f"| `TOOL_SELECTOR_{old.upper()}` | `{old}` | `{group}.{field}` (`{new}`) |"
        assert row in text, f"{group}.{field}: the reference's old names do not list {old}"


def test_a_group_module_imports_no_settings_machinery() -> None:
    """The stages import their own group (tool_selector/route/tiers.py reads TierThresholds) without
    pydantic-settings and the sources."""
    for group in GROUPS:
        module = importlib.import_module(f"tool_selector.config.{group}")
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        assert "pydantic_settings" not in source and "import tool_selector.config.settings" not in source
        assert "from tool_selector.config.settings" not in source, group
        assert isinstance(getattr(module, GROUPS[group].__name__), type)
        assert issubclass(GROUPS[group], BaseModel)
