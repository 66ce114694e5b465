"""The relevance model shipped in the package: its files, licence and provenance, that it runs on
onnxruntime and tokenizers alone, and that it reads a request the way a tool is described."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tool_selector.core.errors import EmbedderError
from tool_selector.embedding.embedders import (
    RELEVANCE_DIR,
    RELEVANCE_MODEL_ID,
    OnnxFileEmbedder,
    relevance_embedder,
)
from tool_selector.index.build import tool_vector_text


def test_the_model_ships_with_its_licence_provenance_and_the_table_it_was_judged_by() -> None:
    files = {p.name for p in RELEVANCE_DIR.iterdir()}
    assert {"model.onnx", "tokenizer.json", "LICENSE", "provenance.json", "README.md"} <= files
    assert (RELEVANCE_DIR / "model.onnx").stat().st_size <= 30 * 2**20
    licence = (RELEVANCE_DIR / "LICENSE").read_text("utf-8")
    assert "Apache License" in licence and "all-MiniLM-L6-v2" in licence
    provenance = json.loads((RELEVANCE_DIR / "provenance.json").read_text("utf-8"))
    assert provenance["model"] == RELEVANCE_MODEL_ID
    names = {d["name"] for d in provenance["datasets"]}
    every = {"msc_bench_dev", "metatool", "livemcpbench", "toolalpaca", "restbench", "personal-setups"}
    assert every <= names
    assert all(len(d["sha256"]) == 64 and d["pairs"] > 0 for d in provenance["datasets"])
    assert len(provenance["training"]["losses"]) == provenance["training"]["steps"] > 0
    assert provenance["lodo"]["folds"], "the leave-one-dataset-out figures it was judged by"
    for check in provenance["export"]["int8_check_tool_r5"].values():
        assert check["int8"] >= check["fp32"] - provenance["export"]["int8_tolerance"]


@pytest.mark.usefixtures("real_model")
def test_it_runs_without_torch_or_transformers() -> None:
    script = (
        "import sys\n"
        "sys.modules['torch'] = None; sys.modules['transformers'] = None\n"  # any import of them fails
        "from tool_selector.embedding.embedders import relevance_embedder\n"
        "v = relevance_embedder(threads=1).embed_documents(['fetch a web page', 'what time is it'])\n"
        "print(v.shape, round(float((v * v).sum(axis=1).min()), 4))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(2,", "384)", "1.0"]


@pytest.mark.usefixtures("real_model")
def test_a_request_is_nearest_the_tool_that_does_it() -> None:
    model = relevance_embedder(threads=1)
    tools = [
        tool_vector_text("get_current_time", "time", "Get current time in a specific timezone"),
        tool_vector_text("fetch", "fetch", "Fetches a URL from the internet and extracts its contents"),
        tool_vector_text("git_status", "git", "Shows the working tree status"),
    ]
    vectors = model.embed_documents(tools)
    for request, right in [
        ("what time is it in Tokyo right now?", 0),
        ("grab the contents of the page at url", 1),
        ("did I change anything in my repo since the last commit?", 2),
    ]:
        scores = vectors @ model.embed_query(request)
        assert int(np.argmax(scores)) == right, (request, scores)


@pytest.mark.usefixtures("real_model")  # the guard lets a real model be built only in slow tests
def test_a_missing_model_file_is_named_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError) as info:
        OnnxFileEmbedder(tmp_path / "model.onnx", RELEVANCE_DIR / "tokenizer.json", model_id="x")
    assert "model.onnx" in str(info.value) and "Reinstall tool-selector" in str(info.value.hint)
