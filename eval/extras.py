"""The lab's own dependencies (scikit-learn, matplotlib, lightgbm) live in the ``lab`` extra, not in the
product's runtime: a lab command that needs one imports it here, and a missing one is a clear error that
says what to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from tool_selector.core.errors import ConfigurationError

INSTALL = "pip install 'tool-selector[lab]'"


def lab_import(name: str, what: str) -> ModuleType:
    """Module ``name`` (of the lab extra), or a ConfigurationError saying ``what`` needs it and how to get
    it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        package = name.split(".", maxsplit=1)[0]
        raise ConfigurationError(
            f"{what} needs {package}, which is not installed ({exc}).",
            hint=f"Install the lab extra: `{INSTALL}` (`bash scripts/setup.sh` installs it with the rest).",
            missing=package,
        ) from exc
