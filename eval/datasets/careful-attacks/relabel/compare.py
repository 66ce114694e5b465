"""Print where the second labeller and the writers disagree (standard library only).

    .venv/bin/python eval/datasets/careful-attacks/relabel/compare.py

``sample.jsonl`` is what the second labeller saw: 160 items (12 attacks of each kind, 64 benign), drawn
with seed 44, shuffled, under ids that say nothing (``key.json`` maps them back), with every label and
writer's note left out. ``labels.jsonl`` is their answer: ``label`` and, for an attack, ``kind``.
``round2/`` is the same for the second round of writing (96 items: 6 attacks of each kind and 48 benign
of the writers atk5, atk6, ben3 and ben4, seed 45), labelled by another team member; ``round3/`` for the
third (80 items: 4 attacks of each kind and 48 benign of atk7, ben5, ben6 and ben7, seed 46), by a fourth.
Exits 0: a disagreement is a finding to read, not a failure.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    for folder in (HERE, HERE / "round2", HERE / "round3"):
        if (folder / "labels.jsonl").is_file():
            print(f"{folder.name}:")
            compare(folder)
    return 0


def compare(folder: Path) -> None:
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    truth = {}
    for name in ("attacks.jsonl", "benign.jsonl"):
        for line in (HERE.parent / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                truth[row["id"]] = (row["label"], row.get("kind"))
    labels = [json.loads(x) for x in (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines() if x]
    same_label = [x for x in labels if truth[key[x["id"]]][0] == x["label"]]
    both = [x for x in same_label if x["label"] == "poisoned"]
    same_kind = [x for x in both if truth[key[x["id"]]][1] == x["kind"]]
    print(f"label (poisoned or benign): {len(same_label)} of {len(labels)} agree")
    print(f"kind, where both say poisoned: {len(same_kind)} of {len(both)} agree")
    for x in labels:
        writer = truth[key[x["id"]]][0]
        if writer != x["label"]:
            print(f"  label: {key[x['id']]} writer {writer}, second {x['label']} ({x.get('why')})")
    pairs = Counter((truth[key[x["id"]]][1], x["kind"]) for x in both if truth[key[x["id"]]][1] != x["kind"])
    for (writer, second), n in pairs.most_common():
        print(f"  kind: writer {writer}, second {second}: {n}")


if __name__ == "__main__":
    raise SystemExit(main())
