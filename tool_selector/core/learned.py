"""The one loader of the learned files the product ships and reads (the confidence calibration, the
ranker, the shadowing classifier, the memory's judge): each a JSON file with a ``format`` field, read
from a path the operator set (at most ``max_file_bytes``) or from the package, checked for its format and
validated as its model, every failure a CalibrationError that says how to get a good one. The ONNX
models (the relevance model, the capability judge) have their own loaders: they are not JSON."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from tool_selector.core.errors import CalibrationError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited

M = TypeVar("M", bound=BaseModel)


def read_model_file(
    model: type[M],
    path: Path | None,
    *,
    packaged: str,
    package: str,
    what: str,
    expected_format: str,
    remedy: str,
    setting: str | None,
    limit_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> tuple[M, str]:
    """A fitted model file (``path``, or ``packaged`` inside ``package``) checked for its format and read
    as ``model``, and where it came from; every failure a CalibrationError that says how to get a good
    one. ``setting``: the one that points at another file (None: the packaged file alone is read)."""
    other = f"unset {setting}" if setting else "reinstall tool-selector"
    try:
        if path is None:
            text = resources.files(package).joinpath(packaged).read_text()
            where = f"packaged {packaged}"
        else:
            text = read_text_limited(path, limit_bytes=limit_bytes, what=what, error=CalibrationError)
            where = str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(
            f"Cannot read the {what} {path or packaged}: {exc}.",
            hint=f"Point {setting} at a file written by {remedy}, or unset it."
            if setting
            else f"Reinstall tool-selector, or re-run {remedy}.",
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(
            f"The {what} {where} is not JSON: {exc}.", hint=f"Re-run {remedy} to write a fresh one."
        ) from exc
    if isinstance(data, dict) and data.get("format") != expected_format:
        raise CalibrationError(
            f"The {what} {where} is in format {data.get('format', 'v1 (no format field)')!r}; "
            f"this version of tool-selector reads {expected_format!r}.",
            hint=f"Re-run {remedy} to write one in the current format, or {other}.",
        )
    try:
        return model.model_validate(data), where
    except ValidationError as exc:
        raise CalibrationError(
            f"The {what} {where} is malformed: {exc}.",
            hint=f"Re-run {remedy} to write a fresh one, or {other}.",
        ) from exc
