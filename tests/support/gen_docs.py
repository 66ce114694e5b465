"""scripts/gen_docs.py, the generator of docs/reference, for the docs tests (a script, not a package:
loaded once from its file)."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from types import ModuleType

from tests.support.paths import ROOT


@cache
def gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module
