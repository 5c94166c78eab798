"""The preparation Job's program on a small GSM8K-format copy this test writes itself: veRL's
parquet columns, the final answers, skipping what is there, atomic writes. Nothing is downloaded."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.tools import ROOT

PREPARE = ROOT / "charts" / "verl-ppo" / "charts" / "ppo-job" / "files" / "prepare.py"
VERL_COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info"]

TRAIN = [
    {"question": "Tom has 3 apples and buys 4 more. How many?", "answer": "3 + 4 = <<3+4=7>>7\n#### 7"},
    {"question": "A farm sells 1,200 eggs twice. How many?", "answer": "1,200 * 2 = 2,400\n#### 2,400"},
    {"question": "It is 5 degrees and drops 8. Now?", "answer": "5 - 8 = -3\n#### -3"},
]
TEST = [{"question": "What is 6 times 7?", "answer": "6 * 7 = 42\n#### 42"}]


def run_prepare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(PREPARE), *args], capture_output=True, text=True, timeout=120)


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


@pytest.fixture
def gsm8k_jsonl(tmp_path: Path) -> Path:
    source = tmp_path / "offline" / "gsm8k"
    write_jsonl(source / "train.jsonl", TRAIN)
    write_jsonl(source / "test.jsonl", TEST)
    return source


def hub_snapshot(source: Path, folder: str, train: list[dict], test: list[dict]) -> Path:
    """The layout of a dataset's hub snapshot: <folder>/<split>-00000-of-00001.parquet."""
    (source / folder).mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(train), source / folder / "train-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist(test), source / folder / "test-00000-of-00001.parquet")
    return source


@pytest.fixture
def gsm8k_hub_layout(tmp_path: Path) -> Path:
    return hub_snapshot(tmp_path / "snapshot", "main", TRAIN, TEST)


def prepare_dataset(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_prepare("--source", "local", "--dataset-local-path", str(source), *extra,
                       "--train-file", str(out / "train.parquet"), "--val-file", str(out / "test.parquet"))


@pytest.mark.parametrize("layout", ["gsm8k_jsonl", "gsm8k_hub_layout"])
def test_gsm8k_becomes_verl_parquet(layout, request, tmp_path):
    out = tmp_path / "data" / "gsm8k"
    result = prepare_dataset(request.getfixturevalue(layout), out)
    assert result.returncode == 0, result.stderr

    train = pq.read_table(out / "train.parquet")
    assert train.column_names == VERL_COLUMNS
    rows = train.to_pylist()
    assert [row["reward_model"]["ground_truth"] for row in rows] == ["7", "2400", "-3"]
    assert {row["data_source"] for row in rows} == {"openai/gsm8k"}
    assert {row["ability"] for row in rows} == {"math"}
    first = rows[0]
    assert first["prompt"][0]["role"] == "user"
    assert first["prompt"][0]["content"].startswith(TRAIN[0]["question"])
    assert "####" in first["prompt"][0]["content"]  # tells the model where the scored answer goes
    assert first["extra_info"] == {"split": "train", "index": 0,
                                   "question": TRAIN[0]["question"], "answer": TRAIN[0]["answer"]}
    # veRL reads the nested ground truth as a column path.
    assert train.schema.field("reward_model").type.get_field_index("ground_truth") >= 0

    test = pq.read_table(out / "test.parquet").to_pylist()
    assert [(row["extra_info"]["split"], row["reward_model"]["ground_truth"]) for row in test] == [("test", "42")]


def test_what_is_there_is_skipped(gsm8k_jsonl, tmp_path):
    out = tmp_path / "data"
    assert prepare_dataset(gsm8k_jsonl, out).returncode == 0
    before = (out / "train.parquet").stat().st_mtime_ns
    again = prepare_dataset(gsm8k_jsonl, out)
    assert again.returncode == 0 and "already there" in again.stdout
    assert (out / "train.parquet").stat().st_mtime_ns == before


def test_only_the_missing_split_is_written(gsm8k_jsonl, tmp_path):
    out = tmp_path / "data"
    assert prepare_dataset(gsm8k_jsonl, out).returncode == 0
    (out / "test.parquet").unlink()
    result = prepare_dataset(gsm8k_jsonl, out)
    assert result.returncode == 0
    assert "test rows" in result.stdout and "train rows" not in result.stdout


def test_a_record_without_a_final_answer_fails_and_leaves_nothing(tmp_path):
    source = tmp_path / "bad"
    write_jsonl(source / "train.jsonl", [{"question": "q", "answer": "no marker here"}])
    write_jsonl(source / "test.jsonl", TEST)
    out = tmp_path / "data"
    result = prepare_dataset(source, out)
    assert result.returncode != 0
    assert "####" in result.stderr
    assert not (out / "train.parquet").exists()
    assert list(out.glob(".*partial")) == []


# Runs prepare.py with SIGXFSZ back at its default action: CPython ignores it at start (a write past
# RLIMIT_FSIZE then raises EFBIG, which pyarrow cleans up after); by default it kills the process there
# and then, as the kubelet's SIGKILL or a node loss would: no handler or `finally` runs.
KILLED_AT_FILE_SIZE_LIMIT = ("import runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
                             "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def limit_file_size(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_writer_killed_midway_never_leaves_a_partial_target(tmp_path):
    """The process dies partway through the parquet file: the target must not exist, half-written, for
    the run to read; the retried pod then writes it whole."""
    source = tmp_path / "big"
    many = [{"question": f"{index}: {'lorem ipsum ' * 8}{index * 7919}", "answer": f"work {index}\n#### {index}"}
            for index in range(3000)]
    write_jsonl(source / "train.jsonl", many)
    write_jsonl(source / "test.jsonl", TEST)
    out = tmp_path / "data"
    limit = 64 * 1024
    assert (source / "train.jsonl").stat().st_size > 4 * limit  # the parquet file cannot fit under the limit
    args = [str(PREPARE), "--source", "local", "--dataset-local-path", str(source),
            "--train-file", str(out / "train.parquet"), "--val-file", str(out / "test.parquet")]
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_FILE_SIZE_LIMIT, *args], capture_output=True, text=True,
                            timeout=120, preexec_fn=lambda: limit_file_size(limit))
    assert killed.returncode == -signal.SIGXFSZ, killed.stderr[-2000:]
    assert not (out / "train.parquet").exists()
    assert [path.stat().st_size > 0 for path in out.glob(".train.parquet.*.partial")] == [True]  # it died writing
    retried = run_prepare(*args[1:])
    assert retried.returncode == 0, retried.stderr
    assert pq.read_table(out / "train.parquet").num_rows == len(many)


def test_a_record_that_fails_conversion_leaves_no_temporary_file(tmp_path):
    """A failure after the temporary file exists but before it is renamed removes it."""
    source = tmp_path / "mixed"
    write_jsonl(source / "train.jsonl", [{"question": "q", "answer": "#### 1"}, {"question": 7, "answer": "#### 2"}])
    write_jsonl(source / "test.jsonl", TEST)
    out = tmp_path / "data"
    result = prepare_dataset(source, out)
    assert result.returncode != 0 and "convert" in result.stderr
    assert sorted(path.name for path in out.iterdir()) == []


def test_a_missing_split_is_named(tmp_path):
    source = tmp_path / "only-train"
    write_jsonl(source / "train.jsonl", TRAIN)
    result = prepare_dataset(source, tmp_path / "data")
    assert result.returncode != 0 and "no test" in result.stderr


def test_offline_model_is_copied_once(tmp_path):
    offline = tmp_path / "offline-model"
    offline.mkdir()
    (offline / "config.json").write_text('{"model_type": "qwen2"}')
    (offline / "model.safetensors").write_bytes(b"\0" * 16)
    target = tmp_path / "data" / "Qwen2.5-0.5B-Instruct"
    args = ("--source", "local", "--model-local-path", str(offline), "--model-path", str(target))
    first = run_prepare(*args)
    assert first.returncode == 0, first.stderr
    assert (target / "model.safetensors").read_bytes() == b"\0" * 16
    second = run_prepare(*args)
    assert second.returncode == 0 and "already there" in second.stdout


def test_a_directory_without_config_is_not_taken_for_a_model(tmp_path):
    offline = tmp_path / "not-a-model"
    offline.mkdir()
    (offline / "README.md").write_text("weights elsewhere")
    target = tmp_path / "data" / "model"
    result = run_prepare("--source", "local", "--model-local-path", str(offline), "--model-path", str(target))
    assert result.returncode != 0 and "config.json" in result.stderr
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # the partial copy is gone too


@pytest.mark.parametrize("args, message", [
    (["--source", "local", "--train-file", "/x/train.parquet"], "--dataset-local-path"),
    (["--source", "local", "--model-path", "/x/model"], "--model-local-path"),
    (["--source", "huggingface", "--model-path", "/x/model"], "--model-id"),
])
def test_incomplete_arguments_are_named(args, message):
    result = run_prepare(*args)
    assert result.returncode == 2 and message in result.stderr


# MATH as its hub snapshot lays it out (DigitalLearningGmbH/MATH-lighteval: data/<split>-*.parquet with
# problem / level / type / solution), answers inside the solution's last \boxed{...}.
MATH_TRAIN = [
    {"problem": "What is $1+1$?", "level": "Level 1", "type": "Algebra",
     "solution": "We add: $1+1=\\boxed{2}$."},
    {"problem": "Simplify $\\frac{2}{4}$.", "level": "Level 2", "type": "Prealgebra",
     "solution": "First $\\boxed{1}$ is wrong; the answer is $\\boxed{\\frac{1}{2}}$."},
]
MATH_TEST = [{"problem": "Area of a unit square?", "level": "Level 1", "type": "Geometry",
              "solution": "It is $\\fbox{1}$."}]


@pytest.fixture
def math_hub_layout(tmp_path: Path) -> Path:
    return hub_snapshot(tmp_path / "math-snapshot", "data", MATH_TRAIN, MATH_TEST)


def prepare_math(source: Path, out: Path) -> subprocess.CompletedProcess:
    return prepare_dataset(source, out, "--dataset-format", "math")


def test_math_becomes_verl_parquet_scored_by_verls_math_scorer(math_hub_layout, tmp_path):
    out = tmp_path / "data" / "math"
    result = prepare_math(math_hub_layout, out)
    assert result.returncode == 0, result.stderr
    train = pq.read_table(out / "train.parquet")
    assert train.column_names == VERL_COLUMNS
    rows = train.to_pylist()
    # The last \boxed{...}, nested braces kept whole: what veRL's MATH scorer compares the response's with.
    assert [row["reward_model"]["ground_truth"] for row in rows] == ["2", "\\frac{1}{2}"]
    assert {row["data_source"] for row in rows} == {"DigitalLearningGmbH/MATH-lighteval"}
    assert rows[0]["prompt"][0]["content"].startswith(MATH_TRAIN[0]["problem"])
    assert "\\boxed{}" in rows[0]["prompt"][0]["content"]
    assert rows[1]["extra_info"]["answer"] == MATH_TRAIN[1]["solution"]
    test = pq.read_table(out / "test.parquet").to_pylist()
    assert [row["reward_model"]["ground_truth"] for row in test] == ["1"]


def test_a_math_solution_without_a_boxed_answer_fails_and_leaves_nothing(tmp_path):
    source = tmp_path / "bad-math"
    write_jsonl(source / "train.jsonl", [{"problem": "p", "solution": "the answer is 3"}])
    write_jsonl(source / "test.jsonl", [{"problem": "p", "solution": "open \\boxed{3"}])
    out = tmp_path / "data"
    result = prepare_math(source, out)
    assert result.returncode != 0 and "\\boxed" in result.stderr
    assert not (out / "train.parquet").exists() and list(out.glob(".*partial")) == []
