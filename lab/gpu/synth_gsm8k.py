"""Synthetic GSM8K-format records ({"question", "answer" ending in "#### N"}) for the GPU proof.

The proof runs without network, so instead of GSM8K it writes word problems of the same format as
train.jsonl and test.jsonl, which the project's own prepare.py turns into veRL's parquet files.

Usage: python3 lab/gpu/synth_gsm8k.py OUT_DIR [TRAIN_ROWS] [TEST_ROWS]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

TEMPLATES = (
    ("{name} has {a} apples and buys {b} more. How many apples does {name} have now?", "{a} + {b} = {r}",
     lambda a, b: a + b),
    ("{name} reads {a} pages a day for {b} days. How many pages does {name} read?", "{a} * {b} = {r}",
     lambda a, b: a * b),
    ("{name} had {c} stickers and gave away {b}. How many stickers are left?", "{c} - {b} = {r}", lambda a, b: a),
)
NAMES = ("Tom", "Ana", "Li Wei", "Sara", "Omar", "Mia")


def record(rng: random.Random) -> dict[str, str]:
    question, working, result = rng.choice(TEMPLATES)
    a, b = rng.randint(2, 60), rng.randint(2, 40)
    r = result(a, b)
    values = {"name": rng.choice(NAMES), "a": a, "b": b, "c": a + b, "r": r}
    return {"question": question.format(**values), "answer": f"{working.format(**values)}\n#### {r}"}


def records(count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [record(rng) for _ in range(count)]


def write(out_dir: Path, train_rows: int, test_rows: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in (("train.jsonl", records(train_rows, 0)), ("test.jsonl", records(test_rows, 1))):
        with open(out_dir / name, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)
    print(f"synthetic GSM8K: {train_rows} train and {test_rows} test records in {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    write(Path(sys.argv[1]), *(int(arg) for arg in sys.argv[2:]))
