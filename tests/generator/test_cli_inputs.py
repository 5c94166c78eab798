"""Careless command lines: each ends with one line naming the argument and its value, exit 2, no traceback, and
nothing written that a later `check` or Helm would refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main


def run(argv: list[str]) -> int:
    """main's exit status, argparse's own refusals (SystemExit 2) included."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def render(output: Path, *args: str) -> list[str]:
    return ["render", "seed-2gpu", "--output", str(output), *args]


# (id, argv after `render seed-2gpu --output OUT`, the argument and value the error must name)
RENDER_CASES = [
    ("nodes-zero", ["--nodes", "0"], ["--nodes", "'0'"]),  # was: silently the shape's default nodes
    ("nodes-negative", ["--nodes", "-1"], ["--nodes", "'-1'"]),  # was: ZeroDivisionError
    ("nodes-over-schema", ["--nodes", "2000"], ["--nodes", "'2000'", "1024"]),  # was: a file the schema refuses
    ("responses-zero", ["--responses-per-prompt", "0"], ["--responses-per-prompt", "'0'"]),  # was: the default
    ("responses-negative", ["--responses-per-prompt", "-2"], ["--responses-per-prompt", "'-2'"]),
    ("responses-over-schema", ["--responses-per-prompt", "10000"], ["--responses-per-prompt", "'10000'", "1024"]),
    ("responses-below-group", ["--algorithm", "grpo", "--responses-per-prompt", "1"],
     ["--responses-per-prompt 1", "grpo", "at least 2"]),  # was: a file the chart's rule refuses
    ("share-zero", ["--resource-share", "0"], ["--resource-share", "'0'"]),  # was: cpu "0", memory 0Gi
    ("share-over-one", ["--resource-share", "1.5"], ["--resource-share", "'1.5'"]),  # was: more than allocatable
    ("share-nan", ["--resource-share", "nan"], ["--resource-share", "'nan'"]),  # was: "cannot convert float NaN"
    ("share-inf", ["--resource-share", "inf"], ["--resource-share", "'inf'"]),
    ("share-rounds-to-nothing", ["--resource-share", "0.001"], ["--resource-share 0.001", "0 CPU"]),
    ("rollout-shape-empty", ["--rollout-shape", ""], ["--rollout-shape ''"]),  # was: silently no pool
    ("model-unknown", ["--model", "nope"], ["--model 'nope'", "qwen2.5-0.5b"]),  # was: KeyError
]


@pytest.mark.parametrize("argv,names", [case[1:] for case in RENDER_CASES], ids=[case[0] for case in RENDER_CASES])
def test_render_refuses_with_one_line_and_writes_nothing(argv: list[str], names: list[str], tmp_path: Path, capsys):
    output = tmp_path / "out"
    assert run(render(output, *argv)) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in error and all(name in error for name in names), error
    assert not output.exists()


def catalogs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Files that are no catalog, and what the error says of each."""
    (tmp_path / "list.yaml").write_text("- a: 1\n")
    (tmp_path / "other.yaml").write_text("foo: 1\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "broken.yaml").write_text("a: [\n")
    return {"missing": (tmp_path / "missing.yaml", "No such file"), "folder": (tmp_path, "Is a directory"),
            "list": (tmp_path / "list.yaml", "not a catalog"), "other": (tmp_path / "other.yaml", "not a catalog"),
            "empty": (tmp_path / "empty.yaml", "not a catalog"), "broken": (tmp_path / "broken.yaml", "not YAML")}


@pytest.mark.parametrize("kind", ["missing", "folder", "list", "other", "empty", "broken"])
@pytest.mark.parametrize("command", [["shapes"], ["plan", "--shape", "seed-2gpu", "--model", "qwen2.5-0.5b"],
                                     ["render", "seed-2gpu"]], ids=["shapes", "plan", "render"])
def test_a_catalog_that_is_none_is_named(kind: str, command: list[str], tmp_path: Path, capsys):
    catalog, says = catalogs(tmp_path)[kind]
    output = tmp_path / "out"
    extra = ["--output", str(output)] if command[0] == "render" else []
    assert run([*command, "--catalog", str(catalog), *extra]) == 2  # was: a traceback, exit 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"--catalog {catalog}" in error and says in error, error
    assert "catalog.yaml" in error and not output.exists()


def test_shapes_names_an_unknown_model(capsys):
    assert run(["shapes", "--model", "nope"]) == 2  # was: KeyError
    assert capsys.readouterr().err.strip() == ("shapes: unknown --model 'nope'; give one of the catalog's models "
                                               "(qwen2.5-0.5b, qwen2.5-1.5b, qwen2.5-3b, qwen2.5-7b)")


def test_render_output_that_is_a_file(tmp_path: Path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    for output in (taken, taken / "below"):  # was: FileExistsError / NotADirectoryError
        assert run(render(output)) == 2
        error = capsys.readouterr().err.strip()
        assert error == f"render: --output {output}: {taken} is a file, not a folder; give a folder (made if missing)"
    assert taken.read_text() == ""


@pytest.mark.parametrize("where", ["missing", "not-a-chart"])
def test_check_names_a_chart_folder_without_a_chart(where: str, tmp_path: Path, capsys):
    chart = tmp_path / "missing" if where == "missing" else tmp_path
    assert run(["check", "--chart", str(chart)]) == 2  # was: FileNotFoundError, or a walk of the whole folder
    error = capsys.readouterr().err.strip()
    assert error == (f"check: --chart {chart}: no Chart.yaml there; give the verl-ppo chart's folder, e.g. "
                     "charts/verl-ppo (the default)")


# (id, the file's text, the finding's start). Helm keeps a key's last value and drops the first's without a word.
DUPLICATE_CASES = [
    ("section-twice", 'ppo-job:\n  verlVersion: "0.9.1"\nppo-job:\n  data: {trainBatchSize: 128}\n',
     "ppo-job=: is given twice in {file} (lines 1 and 3)"),  # was: ok, veRL 0.4.1 run (the first block dropped)
    ("lora-twice", "ppo-job:\n  model:\n    lora: {rank: 8}\n    lora: {alpha: 32}\n",
     "ppo-job.model.lora=: is given twice in {file} (lines 3 and 4)"),
]


@pytest.mark.parametrize("text,start", [case[1:] for case in DUPLICATE_CASES],
                         ids=[case[0] for case in DUPLICATE_CASES])
def test_check_names_a_key_given_twice(text: str, start: str, tmp_path: Path, capsys):
    values = tmp_path / "values.yaml"
    values.write_text(text)
    assert run(["check", str(values)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{values}: " + start.format(file=values)), lines
    assert lines[0].endswith("Fix: merge the two into one"), lines


def test_check_leaves_a_merge_key_and_its_override_alone(tmp_path: Path, capsys):
    values = tmp_path / "values.yaml"
    values.write_text("ppo-job:\n  data: {trainBatchSize: 128}\n  rollout:\n    <<: {name: vllm}\n    name: vllm\n")
    assert run(["check", str(values)]) == 0, capsys.readouterr().out
