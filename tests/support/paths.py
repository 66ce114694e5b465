"""Where things are, for every test module whatever its folder: the repository, the test data and the
MCP server scripts used as real upstreams."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
SERVERS = TESTS / "servers"
EXAMPLES = ROOT / "examples"
DEMO_CATALOG = EXAMPLES / "demo-catalog"
DATASETS = ROOT / "eval" / "datasets"
GATEWAY_DEMO = DATASETS / "gateway-demo"
BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
