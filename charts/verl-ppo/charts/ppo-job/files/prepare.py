"""Put the dataset (GSM8K or MATH, in veRL's parquet layout) and the model onto the shared volume before the run.

Each target is skipped when it is already there, and written under a temporary name first, then
renamed: a retried or concurrent pod never leaves a half-written file that the run would read.

Sources: Hugging Face or ModelScope (their client libraries, imported only when used; a mirror
endpoint and a token come from the environment), or an offline copy already on the volume.
Reading jsonl needs only the standard library; parquet needs pyarrow, which veRL images carry.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

FINAL_ANSWER = re.compile(r"####\s*(-?[0-9.,]+)\s*$")
BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
SPLITS = {"train": "train", "val": "test"}  # our target -> the dataset's split name (GSM8K's and MATH's)
RECORD_SUFFIXES = (".parquet", ".jsonl", ".json")


def log(message: str) -> None:
    print(f"[verl-ppo prepare] {message}", flush=True)


def final_answer(solution: str) -> str:
    """The number GSM8K puts after '####', without thousands separators."""
    match = FINAL_ANSWER.search(solution.strip())
    if not match:
        raise ValueError(f"answer has no '#### <number>' at its end: {solution[-80:]!r}")
    return match.group(1).replace(",", "")


def boxed_answer(solution: str) -> str:
    """What MATH's solution puts in its last \\boxed{...} (braces balanced), as veRL's MATH scorer compares it."""
    starts = list(BOXED.finditer(solution))
    if not starts:
        raise ValueError(f"solution has no \\boxed{{...}} answer: {solution[-80:]!r}")
    depth, begin = 1, starts[-1].end()
    for position in range(begin, len(solution)):
        depth += {"{": 1, "}": -1}.get(solution[position], 0)
        if depth == 0:
            return solution[begin:position]
    raise ValueError(f"solution's last \\boxed{{ is never closed: {solution[-80:]!r}")


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset's record fields and how veRL scores it: its reward function is chosen by data_source."""

    data_source: str
    question_field: str
    solution_field: str
    instruction: str
    answer: Callable[[str], str]


FORMATS = {
    "gsm8k": DatasetFormat("openai/gsm8k", "question", "answer",
                           'Let\'s think step by step and output the final answer after "####".', final_answer),
    "math": DatasetFormat("DigitalLearningGmbH/MATH-lighteval", "problem", "solution",
                          "Let's think step by step and output the final answer within \\boxed{}.", boxed_answer),
}


def verl_row(form: DatasetFormat, record: dict[str, Any], split: str, index: int) -> dict[str, Any]:
    """One record as the row veRL's RLHF dataset and its reward function for the data_source read."""
    question, solution = record[form.question_field], record[form.solution_field]
    return {
        "data_source": form.data_source,
        "prompt": [{"role": "user", "content": f"{question} {form.instruction}"}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": form.answer(solution)},
        "extra_info": {"split": split, "index": index, "question": question, "answer": solution},
    }


def read_records(path: Path, form: DatasetFormat) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path, columns=[form.question_field, form.solution_field]).to_pylist()
    with path.open(encoding="utf-8") as source:
        if path.suffix == ".json":
            return json.load(source)
        return [json.loads(line) for line in source if line.strip()]


def find_split_file(root: Path, split: str) -> Path:
    """The file of one GSM8K split in a local copy: the file itself, or e.g. main/test-00000-of-00001.parquet."""
    candidates = sorted(
        path for path in root.rglob("*")
        if path.is_file() and path.suffix in RECORD_SUFFIXES and path.name.startswith(split)
    )
    if not candidates:
        raise FileNotFoundError(f"no {split}*.parquet / {split}*.jsonl under {root}")
    return candidates[0]


def write_parquet_atomically(rows: list[dict[str, Any]], target: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(handle)
    try:
        pq.write_table(pa.Table.from_pylist(rows), partial)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def download(source: str, repo_id: str, repo_type: str, into: Path) -> Path:
    """A snapshot of a hub repository in `into`. Mirror and token come from the environment."""
    if source == "huggingface":  # reads HF_ENDPOINT and HF_TOKEN itself
        from huggingface_hub import snapshot_download

        snapshot_download(repo_id=repo_id, repo_type=repo_type, local_dir=str(into))
        return into
    if source == "modelscope":  # reads MODELSCOPE_DOMAIN itself; the token needs a login
        from modelscope.hub.api import HubApi
        from modelscope.hub.snapshot_download import snapshot_download

        if os.environ.get("MODELSCOPE_API_TOKEN"):
            HubApi().login(os.environ["MODELSCOPE_API_TOKEN"])
        snapshot_download(repo_id=repo_id, repo_type=repo_type, local_dir=str(into))
        return into
    raise ValueError(f"unknown source {source!r} (huggingface, modelscope, local)")


@dataclass
class DatasetTask:
    source: str
    dataset_id: str
    local_path: str
    targets: dict[str, Path]  # "train" / "val" -> parquet path
    form: DatasetFormat

    def missing(self) -> dict[str, Path]:
        return {name: path for name, path in self.targets.items() if not path.exists()}

    def run(self, scratch: Path) -> None:
        missing = self.missing()
        if not missing:
            log(f"dataset already there: {', '.join(str(p) for p in self.targets.values())}")
            return
        root = Path(self.local_path) if self.source == "local" else download(
            self.source, self.dataset_id, "dataset", scratch / "dataset")
        for name, target in missing.items():
            split = SPLITS[name]
            records = read_records(find_split_file(root, split), self.form)
            rows = [verl_row(self.form, record, split, index) for index, record in enumerate(records)]
            write_parquet_atomically(rows, target)
            log(f"wrote {len(rows)} {split} rows to {target}")


@dataclass
class ModelTask:
    source: str
    model_id: str
    local_path: str
    target: Path

    def present(self) -> bool:
        return (self.target / "config.json").exists()

    def run(self, scratch: Path) -> None:
        if self.present():
            log(f"model already there: {self.target}")
            return
        self.target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", suffix=".partial", dir=self.target.parent))
        try:
            if self.source == "local":
                shutil.copytree(self.local_path, partial, dirs_exist_ok=True)
            else:
                download(self.source, self.model_id, "model", partial)
            if not (partial / "config.json").exists():
                raise FileNotFoundError(f"{self.model_id or self.local_path} has no config.json: not a model directory")
            if self.target.exists():  # an empty or broken leftover without config.json
                shutil.rmtree(self.target)
            os.replace(partial, self.target)
            log(f"model ready at {self.target}")
        finally:
            if partial.exists():
                shutil.rmtree(partial)


def parse_args(argv: Iterable[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", choices=["huggingface", "modelscope", "local"], default="huggingface")
    parser.add_argument("--dataset-id", default="openai/gsm8k")
    parser.add_argument("--dataset-format", choices=sorted(FORMATS), default="gsm8k")
    parser.add_argument("--dataset-local-path", default="", help="offline copy of the dataset (source local)")
    parser.add_argument("--train-file", help="target train parquet; omit to skip the dataset")
    parser.add_argument("--val-file", help="target validation parquet")
    parser.add_argument("--model-id", default="")
    parser.add_argument("--model-local-path", default="", help="offline model directory (source local)")
    parser.add_argument("--model-path", help="target model directory; omit to skip the model")
    args = parser.parse_args(list(argv))
    if args.source == "local":
        if args.train_file and not args.dataset_local_path:
            parser.error("--source local needs --dataset-local-path for the dataset")
        if args.model_path and not args.model_local_path:
            parser.error("--source local needs --model-local-path for the model")
    elif args.model_path and not args.model_id:
        parser.error(f"--source {args.source} needs --model-id for the model")
    return args


def tasks_from(args: argparse.Namespace) -> list[DatasetTask | ModelTask]:
    tasks: list[DatasetTask | ModelTask] = []
    if args.train_file:
        targets = {"train": Path(args.train_file)}
        if args.val_file:
            targets["val"] = Path(args.val_file)
        tasks.append(DatasetTask(args.source, args.dataset_id, args.dataset_local_path, targets,
                                 FORMATS[args.dataset_format]))
    if args.model_path:
        tasks.append(ModelTask(args.source, args.model_id, args.model_local_path, Path(args.model_path)))
    return tasks


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="verl-ppo-prepare-") as scratch:
        for task in tasks_from(args):
            task.run(Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
