"""Tiers and top powers: the embedded backend against the Weaviate backend on the loopback stand-in.

    .venv/bin/python tests/support/compare_backends.py ../shared/benchmarks/msc_bench_dev 622

Imports the benchmark's catalog into a temporary folder, indexes it into both backends (Weaviate's
from the vector cache), resolves the first N queries on each and prints how many agree. The queries
are only resolved: they reach no enrichment, profile or index.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]  # the repository, never tests/ (its folders mirror the packages)


def main(bench: Path, limit: int) -> str:
    from services.resolve.read_path import ReadPath
    from services.root.container import Container
    from services.write.catalog import import_catalog_dir
    from services.write.indexing import build_index
    from tests.support.weaviate_fake import FakeWeaviate
    from tool_selector.config.settings import Settings
    from tool_selector.embedding.embedders import MiniLMEmbedder

    work = Path(tempfile.mkdtemp(prefix=f"compare-{bench.name}-"))
    cache = Path(tempfile.gettempdir()) / "compare-backends-cache"
    embedder = MiniLMEmbedder(cache, engine="onnx", threads=1)
    lines = (bench / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line)["query"] for line in lines if line.strip()][:limit]
    with FakeWeaviate() as fake:
        common = {"data_dir": work / "data", "cache_dir": cache}
        embedded = Container(Settings(**common), embedder=embedder)  # type: ignore[arg-type]
        weaviate = Container(
            Settings(  # type: ignore[arg-type]
                **common,
                backend="weaviate",
                weaviate={
                    "url": fake.url,
                    "grpc_url": f"http://127.0.0.1:{fake.grpc_port}",
                    "collection": "ToolCompare",
                },
            ),
            embedder=embedder,
        )
        import_catalog_dir(embedded, bench, approve=True, actor="test")
        build_index(embedded)
        build_index(weaviate)
        first, second = ReadPath.fixed(embedded), ReadPath.fixed(weaviate)
        tiers = powers = close = 0
        differ: list[str] = []
        for text in queries:
            r1, d1 = first.decide(text)
            r2, d2 = second.decide(text)
            tiers += d1.status == d2.status
            powers += (r1.powers[0].name if r1.powers else None) == (r2.powers[0].name if r2.powers else None)
            close += abs(r1.confidence - r2.confidence) < 0.01
            if d1.status != d2.status:
                differ.append(f"  {text!r}: {d1.status} / {d2.status}")
        embedded.close()
        weaviate.close()
    n = len(queries)
    summary = f"{bench.name}: {n} queries; same tier {tiers}/{n}, same top power {powers}/{n}, "
    return "\n".join([summary + f"confidence within 0.01 {close}/{n}", *differ])


if __name__ == "__main__":
    sys.stdout.write(main(Path(sys.argv[1]), int(sys.argv[2])) + "\n")
