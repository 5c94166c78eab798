"""Tier 1: the catalog, the sizing rules, render output and the schema are what the repository holds."""

import ast
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.catalog import load_catalog
from generator.check import check
from generator.helm import HelmInputs, helm_binary, merged_values, template
from generator.cli import main
from generator import sizing
from generator.algorithms import algorithms
from generator.render import (GPU_TOLERATION, default_verl_version, platform_overlays, render_shape, run_for,
                              sized_shapes, tolerations, verl_version_for, write)
from generator import schema, verlversions
from generator.schema import chart_schemas, values_schema
from generator.schemafindings import unfixed
from generator.sizing import RunShape, size
from generator.docstables import with_tables
from generator.valuesdoc import readmes
from generator.verlversions import version_names
from support.tools import image_values

CATALOG = load_catalog()
MODEL = CATALOG.models["qwen2.5-0.5b"]
REQUIRED_SHAPES = {"seed-2gpu", "a10-24g-x4", "l20-48g-x8", "a100-40g-x8", "a100-80g-x8", "h800-80g-x8",
                   "h20-96g-x8", "h200-141g-x8"}


def test_catalog_covers_the_required_gpu_types():
    assert REQUIRED_SHAPES <= set(CATALOG.shapes)
    for shape in CATALOG.shapes.values():
        assert shape.documented or shape.source, f"{shape.name}: estimated figures must say where they come from"


def test_catalog_schema_rejects_a_shape_without_allocatable(tmp_path: Path):
    import jsonschema

    data = yaml.safe_load(paths.CATALOG.read_text())
    del data["shapes"][0]["allocatable"]
    bad = tmp_path / "catalog.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(jsonschema.ValidationError, match="allocatable"):
        load_catalog(bad)


def test_sizing_reproduces_the_vendor_guide_on_its_shape():
    sizing = size(CATALOG.shapes["seed-2gpu"], MODEL, RunShape(nodes=2))
    assert (sizing.cpu, sizing.memory) == ("30", "100Gi")
    assert (sizing.micro_batch, sizing.log_prob_micro_batch, sizing.ref_log_prob_micro_batch) == (4, 8, 4)
    assert sizing.rollout_memory_fraction == 0.4
    assert sizing.tensor_parallel == 1
    assert not sizing.param_offload and not sizing.optimizer_offload


def test_sizing_scales_with_gpu_memory_and_model_size():
    h200 = size(CATALOG.shapes["h200-141g-x8"], MODEL, RunShape(nodes=1))
    assert h200.micro_batch > 4
    big_model = CATALOG.models["qwen2.5-7b"]
    a10 = size(CATALOG.shapes["a10-24g-x4"], big_model, RunShape(nodes=1))
    assert a10.tensor_parallel == 4, "7.6B bf16 weights (14.2 GiB) over 2 GPUs still exceed a quarter of 24 GiB"
    assert a10.param_offload and a10.optimizer_offload, "7B Adam states over 4 GPUs do not fit 24 GiB"
    assert a10.micro_batch == 1


def test_log_prob_micro_batches_follow_memory_not_the_mini_batch():
    """The H200 profile measured in docs/gpu-proof.md: training micro batch 8 (64 / 8 GPUs), forward-only
    passes at what memory allows (reference 16, rollout log-probs 32), never over the per-GPU batch."""
    h200 = CATALOG.shapes["h200-141g-x8"]
    sizing = size(h200, MODEL, RunShape(nodes=1))
    assert (sizing.micro_batch, sizing.log_prob_micro_batch, sizing.ref_log_prob_micro_batch) == (8, 32, 16)
    wide = size(h200, MODEL, RunShape(nodes=16))  # 128 GPUs: 2 samples of a 256 batch per GPU
    assert (wide.micro_batch, wide.log_prob_micro_batch, wide.ref_log_prob_micro_batch) == (1, 2, 2)


@pytest.mark.parametrize("shape_name", sorted(CATALOG.shapes))
def test_micro_batch_always_divides_the_per_gpu_mini_batch(shape_name):
    shape = CATALOG.shapes[shape_name]
    for nodes in (1, 2, 4, 8):
        run = RunShape(nodes=nodes)
        sizing = size(shape, MODEL, run)
        per_gpu = run.ppo_mini_batch_size // (nodes * shape.gpus_per_node)
        if per_gpu:
            assert per_gpu % sizing.micro_batch == 0


@pytest.mark.parametrize("shape_name", sorted(CATALOG.shapes))
def test_values_directory_is_exactly_what_render_writes(shape_name):
    shape = CATALOG.shapes[shape_name]
    ppo = ALGORITHMS["ppo"]
    run = run_for(ppo, shape.default_nodes, verl_version=verl_version_for(CATALOG.verl, shape, ppo))
    expected = render_shape(shape, MODEL, run, ppo, CATALOG.verl)
    assert (paths.VALUES_DIR / f"{shape_name}.yaml").read_text() == expected, "run: python -m generator render"


def test_tolerations_follow_the_shapes_taints():
    """The GPU taint is always tolerated, once; a taint with a value needs Equal and that value, one without
    it Exists (no catalog shape has such taints today: discover writes them from a cluster's nodes)."""
    shape = dataclasses.replace(CATALOG.shapes["seed-2gpu"], taints=[
        {"key": "dedicated", "value": "rl", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {"key": "spot", "effect": "NoExecute"}])  # keys on either side of nvidia.com/gpu in sort order
    assert tolerations(shape) == [GPU_TOLERATION,
                                  {"key": "dedicated", "operator": "Equal", "value": "rl", "effect": "NoSchedule"},
                                  {"key": "spot", "operator": "Exists", "effect": "NoExecute"}]
    assert tolerations(CATALOG.shapes["seed-2gpu"]) == [GPU_TOLERATION]


@pytest.mark.parametrize("new_text", ["a: 0\n", "c: 0\n"])
def test_render_writes_a_file_whose_text_changed_either_way(tmp_path: Path, new_text):
    """Any other text is written (one that sorts before or after the old), the same text is left alone."""
    path = tmp_path / "values.yaml"
    path.write_text("b: 0\n")
    assert write(path, new_text) is True and path.read_text() == new_text
    assert write(path, new_text) is False


def test_no_stray_files_in_values():
    """One file per node type, the platform overlays, and examples/ (overlays, each on the files it names)."""
    rendered = {f"{name}.yaml" for name in CATALOG.shapes} | {"platforms/vke.yaml", "platforms/generic.yaml"}
    present = {str(p.relative_to(paths.VALUES_DIR)) for p in paths.VALUES_DIR.rglob("*.yaml")
               if p.parent.name != "examples"}
    assert present == rendered


def test_chart_schemas_are_generated_from_schemas_dir():
    assert set(chart_schemas()) == set(paths.CHART.rglob("values.schema.json"))
    for path, text in chart_schemas().items():
        assert path.read_text() == text, f"{path}: run python -m generator schema"
        json.loads(text if path.suffix == ".json" else text.split("-}}\n", 1)[1].rsplit("{{-", 1)[0])


def _published_charts() -> dict[str, dict]:
    return {path.parent.name: json.loads(path.read_text()) for path in paths.CHART.rglob("values.schema.json")}


def test_chart_schemas_are_closed_and_carry_each_fix_in_the_description():
    """What Helm checks is the source's every constraint; editors and Artifact Hub read each fix sentence."""
    import jsonschema

    charts = _published_charts()
    umbrella = charts["verl-ppo"]
    batch = umbrella["properties"]["ppo-job"]["properties"]["data"]["properties"]["trainBatchSize"]
    # The int32 bound keeps a whole number Helm reads as float64 from rendering past int64 (-9223372036854775808).
    assert batch == {"description": "Fix: write a whole number; use 1 or more; use 2147483647 or less",
                     "type": "integer", "minimum": 1, "maximum": 2147483647}
    cpu = umbrella["definitions"]["cpuQuantity"]
    assert cpu["description"].endswith(". Fix: " + schema.values_schema()["definitions"]["cpuQuantity"]["x-fix"])
    assert "x-fix" not in json.dumps(charts) and "x-messages" not in json.dumps(charts)
    for name, published in charts.items():
        validator = jsonschema.Draft7Validator(published)
        assert list(validator.iter_errors({"unknownKey": 1})), name
    assert list(jsonschema.Draft7Validator(umbrella).iter_errors({"global": {"gpu": {"nodes": "two"}}}))


def test_a_components_schema_is_its_section_and_knows_global_is_a_map():
    """Helm checks each component's schema against its section of the merged values (with a copy of global,
    checked in full by the umbrella's schema)."""
    source = schema.values_schema()
    for name in paths.components():
        published = schema.subchart_schema(name)
        assert set(published["properties"]) == set(source["properties"][name]["properties"])
        assert published["properties"]["global"] == {"$ref": "#/definitions/helmGlobal"}


def test_the_umbrellas_schema_requires_no_key_a_components_defaults_hold():
    """helm lint meets the umbrella's schema without the components' defaults: a partial section passes
    there, and each component's own schema (checked on the merged values) keeps the requirement."""
    import jsonschema

    umbrella = schema.umbrella_schema()
    partial = {"global": {"image": {"repository": "r", "tag": "t"}, "storage": {}, "gpu": {"perNode": 1, "nodes": 1}},
               "raycluster": {"head": {"resources": {"cpu": 4}}}, "ppo-job": {"data": {"trainBatchSize": 8}}}
    assert list(jsonschema.Draft7Validator(umbrella).iter_errors(partial)) == []
    assert list(jsonschema.Draft7Validator(umbrella).iter_errors({**partial, "global": {}}))  # global's own: kept
    assert "required" in schema.subchart_schema("ppo-job")["properties"]["data"]
    listed = {"raycluster": {"env": [{"value": "x"}], "extraSecretEnv": {"A": {"secretName": "s"}}}}
    errors = jsonschema.Draft7Validator(umbrella).iter_errors({**partial, **listed})
    assert len(list(errors)) == 2  # whole from the user


@pytest.mark.parametrize("node, description", [
    ({"type": "integer", "minimum": 0, "maximum": 8}, "Fix: write a whole number; use 0 or more; use 8 or less"),
    ({"enum": ["a", "b"]}, "Fix: use one of a, b"),
    ({"type": "string", "pattern": "^a$", "x-fix": "write a", "description": "An a."}, "An a. Fix: write a"),
    ({"type": "string", "maxLength": 3}, "Fix: write text; shorten it to 3 characters or fewer"),
])
def test_a_nodes_fix_sentence_lands_in_its_description(node, description):
    from generator.schemafindings import Wording

    published = schema._published({"properties": {"a": node}}, Wording(schema.values_schema()))["properties"]["a"]
    assert published["description"] == description and not any(key.startswith("x-") for key in published)


def test_no_fix_beside_a_ref_or_in_the_forms_its_node_covers():
    from generator.schemafindings import Wording

    node = {"x-fix": "use x or y", "anyOf": [{"const": ""}, {"type": "integer", "minimum": 1}]}
    published = schema._published({"properties": {"a": node, "b": {"$ref": "#/definitions/c"}}},
                                  Wording(schema.values_schema()))["properties"]
    assert published["a"] == {"description": "Fix: use x or y",
                              "anyOf": [{"const": ""}, {"type": "integer", "minimum": 1}]}
    assert published["b"] == {"$ref": "#/definitions/c"}


def test_the_values_schema_is_read_once_and_shared():
    assert schema.values_schema() is schema.values_schema()


def test_a_schema_constraint_without_a_fix_sentence_is_named(tmp_path: Path, monkeypatch):
    source = tmp_path / "values.schema.yaml"
    source.write_text("properties:\n  port: {type: string, pattern: '^[0-9]+$'}\n")
    monkeypatch.setattr(paths, "VALUES_SCHEMA", source)
    schema.values_schema.cache_clear()
    try:
        with pytest.raises(ValueError) as raised:
            schema.values_schema()
    finally:
        schema.values_schema.cache_clear()
    assert str(raised.value).startswith(f"{source}: constraints without a fix sentence:\n")
    assert "port" in str(raised.value).split("\n", 1)[1]


def test_every_schema_constraint_has_a_fix_sentence():
    assert unfixed(schema.values_schema()) == []
    broken = {"properties": {"name": {"type": "string", "pattern": "^a$"}, "map": {"type": "object",
              "additionalProperties": False, "patternProperties": {"^x$": {}}},
              "ok": {"anyOf": [{"const": ""}], "x-fix": "f"}}}
    assert unfixed(broken) == ["#/properties/name: pattern without x-fix",
                               "#/properties/map: additionalProperties without x-fix"]


def helm_values(*files: Path) -> dict:
    """.Values of the chart with these -f files, as Helm merges them."""
    return merged_values(paths.CHART, HelmInputs(files=files))


def test_the_umbrella_leaves_each_components_defaults_to_it():
    """render reads a component's defaults from its own values.yaml as plain YAML: the umbrella's values.yaml
    only switches each component on."""
    umbrella = yaml.safe_load(paths.CHART_VALUES.read_text())
    components = paths.components()
    assert {name: umbrella[name] for name in components} == {name: {"enabled": True} for name in components}


def test_the_generator_imports_no_ray_and_reads_nothing_of_the_lab():
    """The product's runtime stays thin: the maintainers' tools (the dashboards' generators, the release tooling,
    the lab's values) live under lab/, and the generator reaches none of them."""
    for path in sorted((paths.ROOT / "generator").rglob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not {name.split(".")[0] for name in imported} & {"ray", "lab"}, path
        # A path into the lab is a string of the code (docstrings and comments may name the lab).
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        strings = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                   and isinstance(node.value, str) and id(node) not in docstrings]
        assert not [text for text in strings if re.match(r"(\.?/)?lab(/|$)|requirements-test", text)], \
            f"{path} reads a file of the lab"


def test_subcharts_carry_no_copy_of_global():
    """`global` is the umbrella's alone: Helm copies it into each component's values."""
    for path in paths.subchart_values_files():
        assert "global" not in yaml.safe_load(path.read_text()), path


def test_chart_readmes_are_generated_from_values_comments():
    for path, text in readmes().items():
        assert path.read_text() == text, f"{path}: run python -m generator docs"
    umbrella = (paths.CHART / "README.md").read_text()
    assert "`ppo-job.actor.ppoMicroBatchSizePerGpu`" in umbrella and "### global" in umbrella
    raycluster = (paths.subchart_dir("raycluster") / "README.md").read_text()
    assert "`head.resources.cpu`" in raycluster and "| `global." not in raycluster


def passes(*files: Path) -> list[str]:
    return [str(finding) for finding in check(paths.CHART, HelmInputs(files=files)).findings]


def test_helm_values_are_merged_through_one_copy_of_the_chart(tmp_path: Path, monkeypatch):
    """Each merge of values (a generator check of many files: one per file) reads the same values-only copy of
    the chart, made once per process, not a chart's worth of files copied each time."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert merged_values(paths.CHART, HelmInputs()) == merged_values(paths.CHART, HelmInputs())
    assert len(list(tmp_path.glob("verl-ppo-values-*"))) <= 1  # none: an earlier test of this process made it


def test_every_values_file_passes_check():
    for path in sorted(paths.VALUES_DIR.glob("*.yaml")):
        assert passes(path) == [], path


def test_every_example_passes_check_on_the_values_it_stacks_on(capsys):
    """values/examples/ overlays, each checked with the node type's values its "# Use:" line names (--together)."""
    for path in sorted((paths.VALUES_DIR / "examples").glob("*.yaml")):
        use = next(line for line in path.read_text().splitlines() if line.startswith("# Use: helm install"))
        words = use.split()
        stack = [str(paths.ROOT / words[index + 1]) for index, word in enumerate(words[:-1]) if word == "-f"]
        assert main(["check", "--together", *stack]) == 0, capsys.readouterr().out


def without_nulls(values):
    """Helm drops a null default unless a values file is given: absent and null mean the same to the chart."""
    if isinstance(values, dict):
        return {key: without_nulls(value) for key, value in values.items() if value is not None}
    return values


def test_chart_defaults_are_the_seed_shape():
    assert without_nulls(helm_values()) == without_nulls(helm_values(paths.VALUES_DIR / "seed-2gpu.yaml")), \
        "the charts' values.yaml defaults must equal values/seed-2gpu.yaml"


def test_check_cli_exit_codes(tmp_path: Path, capsys):
    good = paths.VALUES_DIR / "h800-80g-x8.yaml"
    assert main(["check", str(good)]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo-job:\n  actor:\n    ppoMicroBatchSizePerGpu: 7\n")
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "ppo-job.actor.ppoMicroBatchSizePerGpu=7: must divide 16" in out


def test_vke_overlay_needs_bucket_and_secret_then_passes_with_every_shape(tmp_path: Path):
    vke, generic = paths.VALUES_DIR / "platforms" / "vke.yaml", paths.VALUES_DIR / "platforms" / "generic.yaml"
    names = {f.field for f in check(paths.CHART, HelmInputs(files=(vke,))).findings}
    assert {"storage.tos.bucket", "storage.tos.secretName"} <= names
    completed = tmp_path / "completed.yaml"
    completed.write_text(yaml.safe_dump({"storage": {"tos": {"bucket": "b", "secretName": "s"}}}))
    for shape_name in CATALOG.shapes:
        shape = paths.VALUES_DIR / f"{shape_name}.yaml"
        assert passes(shape, vke, completed) == []
        assert passes(shape, generic) == []


@pytest.mark.parametrize("nodes", [1, 3, 64])
@pytest.mark.parametrize("shape_name", sorted(load_catalog().shapes))
def test_rendered_values_pass_the_checks_at_any_cluster_size(shape_name, nodes, tmp_path: Path):
    """Batches grow with the GPUs where the guide's 256 / 64 no longer give every GPU whole samples."""
    catalog = load_catalog()
    values_file = tmp_path / "values.yaml"
    shape, ppo = catalog.shapes[shape_name], ALGORITHMS["ppo"]
    run = run_for(ppo, nodes, verl_version=verl_version_for(catalog.verl, shape, ppo))
    values_file.write_text(render_shape(shape, catalog.models["qwen2.5-0.5b"], run, ppo, catalog.verl))
    assert passes(values_file) == []
    values = helm_values(values_file)
    gpus = values["global"]["gpu"]["nodes"] * values["global"]["gpu"]["perNode"]
    assert values["ppo-job"]["data"]["trainBatchSize"] >= max(256, gpus)


def test_batches_grow_in_whole_mini_batches():
    catalog = load_catalog()
    sizing = size(catalog.shapes["h800-80g-x8"], catalog.models["qwen2.5-0.5b"], RunShape(nodes=3))  # 24 GPUs
    assert (sizing.train_batch_size, sizing.ppo_mini_batch_size) == (288, 72)
    assert 72 // 24 % sizing.micro_batch == 0


def test_rollout_memory_fraction_is_what_the_rollout_needs():
    # Measured on an H200 (docs/gpu-proof.md): 0.7 ran the rollout no faster than 0.4 and held 43 GB more.
    h200 = CATALOG.shapes["h200-141g-x8"]
    assert size(h200, MODEL, RunShape(nodes=1)).rollout_memory_fraction == 0.4
    # 7.6B weights on one 40 GiB GPU per replica, with its 32 rows' KV cache, need more than 0.4 ...
    a100 = size(CATALOG.shapes["a100-40g-x8"], CATALOG.models["qwen2.5-7b"], RunShape(nodes=1))
    assert a100.tensor_parallel == 2 and a100.rollout_memory_fraction == 0.45
    # ... and half the rows per replica on two nodes bring it back to the guide's value.
    two_nodes = size(CATALOG.shapes["a100-40g-x8"], CATALOG.models["qwen2.5-7b"], RunShape(nodes=2))
    assert two_nodes.rollout_memory_fraction == 0.4
    # A batch whose KV cache cannot fit stops at the cap of the GPU size, never past it.
    huge = RunShape(nodes=1, train_batch_size=8192, ppo_mini_batch_size=64, max_prompt_length=4096,
                    max_response_length=4096)
    capped = size(h200, CATALOG.models["qwen2.5-7b"], huge)
    assert capped.rollout_memory_fraction == sizing.rollout_memory_cap(h200) == 0.7


# Critic-free algorithms: sized for n responses per prompt, without a critic (the chart's own table).
ALGORITHMS = algorithms()


def test_the_generator_reads_the_charts_algorithm_table():
    assert next(iter(ALGORITHMS)) == "ppo", "the chart's default, first in the table"
    assert [name for name, algorithm in ALGORITHMS.items() if algorithm.critic] == ["ppo"]
    assert ALGORITHMS["grpo"].responses_per_prompt == 5 and not ALGORITHMS["dapo"].reference
    assert ALGORITHMS["dapo"].versions == ("0.9.1",) and ALGORITHMS["grpo"].versions == tuple(version_names())


def test_a_version_added_to_the_table_is_offered_by_the_schema_and_the_algorithms_it_follows(tmp_path, monkeypatch):
    """The schema's enums are filled in from the tables (x-enum-from) and an algorithm's versions run from its
    `since` to the table's newest: one entry added, no other file edited."""
    entries = yaml.safe_load(verlversions.TABLE.read_text())
    table = tmp_path / "verl-versions.yaml"
    newer = {**entries[-1], "version": "0.10.0", "rolloutNames": ["vllm", "trtllm"]}
    table.write_text(yaml.safe_dump([*entries, newer]))
    monkeypatch.setattr(verlversions, "TABLE", table)
    verlversions.verl_versions.cache_clear()
    values_schema.cache_clear()
    try:
        job = values_schema()["properties"]["ppo-job"]["properties"]
        assert job["verlVersion"]["enum"] == [*(entry["version"] for entry in entries), "0.10.0"]
        assert job["rollout"]["properties"]["name"]["enum"][-1] == "trtllm"
        assert job["algorithm"]["properties"]["name"]["enum"] == list(ALGORITHMS)
        assert all(algorithm.versions[-1] == "0.10.0" for algorithm in algorithms().values())
    finally:
        verlversions.verl_versions.cache_clear()
        values_schema.cache_clear()


def test_n_responses_fill_the_rollout_and_the_critics_memory_makes_room():
    """The KV cache holds prompts x n; without a critic its GPU share is room above the GPU size's cap."""
    seed = CATALOG.shapes["seed-2gpu"]
    assert size(seed, MODEL, run_for(ALGORITHMS["grpo"], 2)).rollout_memory_fraction == 0.4  # n 5 fits 0.4
    # 16 responses: 1,024 rows a GPU need most of it; the cap 0.4 of a 24 GiB GPU plus the critic's 16 bytes
    # a parameter over 4 GPUs (1.8 GiB, one whole step of 0.05).
    assert size(seed, MODEL, run_for(ALGORITHMS["dapo"], 2)).rollout_memory_fraction == 0.45
    big, h800 = CATALOG.models["qwen2.5-7b"], CATALOG.shapes["h800-80g-x8"]
    with_critic = RunShape(nodes=1, responses_per_prompt=5)
    assert size(h800, big, with_critic).rollout_memory_fraction == sizing.rollout_memory_cap(h800) == 0.6
    assert size(h800, big, run_for(ALGORITHMS["grpo"], 1)).rollout_memory_fraction == 0.75  # 14.2 GiB of 80 freed
    a10 = size(CATALOG.shapes["a10-24g-x4"], big, run_for(ALGORITHMS["dapo"], 1))
    assert a10.rollout_memory_fraction == 0.4, "an offloaded critic never held GPU memory to give"


def test_n_responses_enter_the_batch_arithmetic():
    """6 GPUs, 7 responses: every mini batch x 7 must split over 6 GPUs, so the mini batch grows to 66."""
    run = run_for(ALGORITHMS["grpo"], 3, responses_per_prompt=7)
    sizing = size(CATALOG.shapes["seed-2gpu"], MODEL, run)
    assert (sizing.ppo_mini_batch_size, sizing.train_batch_size) == (66, 264)
    assert sizing.ppo_mini_batch_size * 7 // 6 % sizing.micro_batch == 0
    # 16 responses (DAPO) on 8 GPUs: 128 samples a mini batch per GPU leave memory as the only bound.
    dapo = size(CATALOG.shapes["h200-141g-x8"], MODEL, run_for(ALGORITHMS["dapo"], 1))
    assert dapo.micro_batch == 16


def test_critic_free_values_have_no_critic_and_name_their_algorithm():
    shape = CATALOG.shapes["seed-2gpu"]
    grpo = yaml.safe_load(render_shape(shape, MODEL, run_for(ALGORITHMS["grpo"], 2), ALGORITHMS["grpo"]))["ppo-job"]
    assert grpo["algorithm"] == {"name": "grpo"} and "critic" not in grpo and "ref" in grpo
    assert "responsesPerPrompt" not in grpo["rollout"], "the chart's default n for the algorithm applies"
    dapo = yaml.safe_load(render_shape(shape, MODEL, run_for(ALGORITHMS["dapo"], 2, verl_version="0.9.1"),
                                       ALGORITHMS["dapo"]))
    assert dapo["ppo-job"]["verlVersion"] == "0.9.1" and "ref" not in dapo["ppo-job"]
    rloo = yaml.safe_load(render_shape(shape, MODEL, run_for(ALGORITHMS["rloo"], 2), ALGORITHMS["rloo"]))["ppo-job"]
    assert "ref" in rloo, "a KL term in the reward needs the reference model's log-probs too"


@pytest.mark.parametrize("name", [name for name in ALGORITHMS if name != "ppo"])
def test_render_algorithm_writes_values_that_pass_check(name, tmp_path: Path, capsys):
    assert main(["render", "seed-2gpu", "h800-80g-x8", "--algorithm", name, "--nodes", "3",
                 "--output", str(tmp_path)]) == 0
    written = sorted(tmp_path.glob(f"*-{name}.yaml"))
    assert [path.name for path in written] == [f"h800-80g-x8-{name}.yaml", f"seed-2gpu-{name}.yaml"]
    assert all(passes(path) == [] for path in written)
    values = helm_values(written[0])["ppo-job"]
    assert values["algorithm"]["name"] == name


def test_cli_shapes_prints_each_shape_sized_as_render_sizes_it(capsys):
    assert main(["shapes", "--algorithm", "grpo"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["shape", "GPU", "GiB", "GPUs", "nodes", "veRL", "TP", "micro", "tokens", "ckpt",
                              "rollout", "figures"]
    assert [row.split()[0] for row in rows] == list(CATALOG.shapes)
    for row in rows:
        shape = CATALOG.shapes[row.split()[0]]
        version = verl_version_for(CATALOG.verl, shape, ALGORITHMS["grpo"])
        sizing = size(shape, MODEL, run_for(ALGORITHMS["grpo"], shape.default_nodes, verl_version=version))
        figures = [f"{shape.gpu_memory_gib:g}", str(shape.gpus_per_node), str(shape.default_nodes), version,
                   str(sizing.tensor_parallel), str(sizing.micro_batch),
                   str(sizing.train_token_budget) if sizing.dynamic_batching else "-",
                   "on" if sizing.gradient_checkpointing else "off", str(sizing.rollout_memory_fraction),
                   "vendor" if shape.documented else "estimated"]
        assert row.split()[-10:] == figures, row
    assert "0.4.1" in next(row for row in rows if row.startswith("seed-2gpu")), "the guide's shape keeps its veRL"


@pytest.mark.parametrize("command", ["shapes", "render"])
def test_cli_names_an_unknown_algorithm_and_the_tables(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([command, "--algorithm", "sac"])
    choices = ", ".join(repr(name) for name in ALGORITHMS)
    assert stopped.value.code == 2 and f"invalid choice: 'sac' (choose from {choices})" in capsys.readouterr().err


def test_cli_render_writes_what_values_holds_then_leaves_it_unchanged(tmp_path: Path, capsys):
    """Defaults (the shape's nodes, resource share 0.8) give the repository's values/ files."""
    assert main(["render", "seed-2gpu", "a10-24g-x4", "--output", str(tmp_path)]) == 0
    written = capsys.readouterr().out.splitlines()
    assert sorted(written) == sorted(f"wrote {tmp_path / name}" for name in
                                     ["seed-2gpu.yaml", "a10-24g-x4.yaml",
                                      *(f"platforms/{n}" for n in platform_overlays())])
    for name in ["seed-2gpu.yaml", "a10-24g-x4.yaml", "platforms/vke.yaml", "platforms/generic.yaml"]:
        assert (tmp_path / name).read_text() == (paths.VALUES_DIR / name).read_text(), name
    assert main(["render", "seed-2gpu", "--output", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"unchanged {tmp_path / 'seed-2gpu.yaml'}"


def test_cli_render_without_a_shape_writes_every_shape(tmp_path: Path, capsys):
    """Into a directory it makes, parents and all."""
    output = tmp_path / "new" / "values"
    assert main(["render", "--output", str(output)]) == 0
    assert sorted(p.name for p in output.glob("*.yaml")) == sorted(f"{name}.yaml" for name in CATALOG.shapes)


def test_cli_render_names_an_unknown_shape_and_writes_nothing(tmp_path: Path, capsys):
    assert main(["render", "seed-2gpu", "b300", "--output", str(tmp_path)]) == 2
    assert f"unknown shape 'b300'; known: {', '.join(CATALOG.shapes)}" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.yaml"))


def test_cli_render_writes_no_values_the_plan_says_overflow_and_names_what_fits(tmp_path: Path, capsys):
    """A whole 7B model on one H200: the actor's update (fp32 weights, grads, Adam onloaded for the step) overflows
    even with both offloads, so render writes nothing for it, exits 2 and names the plan's fixes, LoRA among them;
    --ignore-plan writes it as sized."""
    one = dataclasses.replace(CATALOG.shapes["h200-141g-x8"], name="h200-141g-x1", gpus_per_node=1)
    catalog = tmp_path / "catalog.yaml"
    document = yaml.safe_load(paths.CATALOG.read_text())
    eight = next(shape for shape in document["shapes"] if shape["name"] == "h200-141g-x8")
    document["shapes"] = [{**eight, "name": one.name, "gpusPerNode": 1}]
    catalog.write_text(yaml.safe_dump(document))
    args = ["render", one.name, "--model", "qwen2.5-7b", "--algorithm", "grpo", "--catalog", str(catalog)]
    assert main([*args, "--output", str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err
    assert "render: h200-141g-x1: qwen2.5-7b (grpo) would run out of GPU memory, so nothing is written" in err
    assert re.search(r"update_actor overflows: [\d.]+ GiB against the GPU's 141 GiB", err)
    assert "more GPUs: --nodes 2" in err and "--lora-rank 32 (the adapters train" in err
    assert f"--catalog {catalog}" in err  # the plan command it names plans the same node type
    assert not list((tmp_path / "refused").glob("*.yaml"))
    assert main([*args, "--output", str(tmp_path / "forced"), "--ignore-plan"]) == 0
    job = yaml.safe_load((tmp_path / "forced" / "h200-141g-x1-grpo.yaml").read_text())["ppo-job"]
    assert (job["actor"]["paramOffload"], job["actor"]["optimizerOffload"]) == (True, True)


def test_cli_render_takes_the_resource_share_and_the_responses(tmp_path: Path, capsys):
    shape = CATALOG.shapes["a10-24g-x4"]
    assert main(["render", shape.name, "--algorithm", "grpo", "--responses-per-prompt", "8", "--resource-share", "0.5",
                 "--output", str(tmp_path)]) == 0
    run = run_for(ALGORITHMS["grpo"], shape.default_nodes, 8, 0.5, CATALOG.verl.version)
    written = (tmp_path / f"{shape.name}-grpo.yaml").read_text()
    assert written == render_shape(shape, MODEL, run, ALGORITHMS["grpo"], CATALOG.verl)
    assert f'tag: "{CATALOG.verl.image_tag}"' in written and 'verlVersion: "0.9.1"' in written


def test_cli_check_names_each_file_and_fails_if_any_fails(tmp_path: Path, capsys):
    good, bad = paths.VALUES_DIR / "seed-2gpu.yaml", tmp_path / "bad.yaml"
    bad.write_text("ppo-job:\n  actor:\n    ppoMicroBatchSizePerGpu: 7\n")
    assert main(["check", str(good), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{good}: ok" and out[1].startswith(f"{bad}: ppo-job.actor.ppoMicroBatchSizePerGpu=7: ")
    assert main(["check", str(bad), str(good)]) == 1, "a later good file must not clear an earlier failure"
    capsys.readouterr()
    assert main(["check", str(good), str(good)]) == 0


def test_cli_check_together_stacks_the_files(tmp_path: Path, capsys):
    """Alone, each file breaks a rule; stacked, the second mends the first."""
    small, mended = tmp_path / "small.yaml", tmp_path / "mended.yaml"
    small.write_text("ppo-job:\n  actor:\n    ppoMicroBatchSizePerGpu: 7\n")
    mended.write_text("ppo-job:\n  actor:\n    ppoMiniBatchSize: 28\n  critic:\n    ppoMicroBatchSizePerGpu: 7\n"
                      "  data:\n    trainBatchSize: 28\n")
    assert main(["check", "--together", str(small), str(mended)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{small} + {mended}: ok"
    assert main(["check", str(small), str(mended)]) == 1


def test_cli_check_of_the_defaults_and_of_a_missing_file(tmp_path: Path, capsys):
    assert main(["check"]) == 0
    assert capsys.readouterr().out == f"{paths.CHART} (defaults): ok\n"
    missing = tmp_path / "missing.yaml"
    assert main(["check", str(missing), str(paths.VALUES_DIR / "seed-2gpu.yaml")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{missing}: cannot read {missing}", f"{paths.VALUES_DIR / 'seed-2gpu.yaml'}: ok"]


# Helm: `shapes` and `render` never run it; `check` finds it through $HELM, then PATH, then the project's cache.
PINNED_HELMS = {f"helm{major}": paths.tool_cache() / "bin" / f"helm{major}" for major in (3, 4)}


def without_helm(tmp_path: Path) -> dict[str, str]:
    """An environment with no Helm anywhere: no $HELM, a PATH of one empty directory, an empty tool cache."""
    (tmp_path / "bin").mkdir()
    env = {key: value for key, value in os.environ.items() if key != "HELM"}
    env.update(PATH=str(tmp_path / "bin"), VERL_PPO_CACHE=str(tmp_path / "empty-cache"))
    return env


def generator_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=paths.ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_shapes_and_render_run_without_helm(tmp_path: Path):
    env = without_helm(tmp_path)
    assert shutil.which("helm", path=env["PATH"]) is None
    shapes = generator_run(env, "shapes", "--algorithm", "dapo")
    assert shapes.returncode == 0 and shapes.stderr == "", shapes.stderr
    assert [row.split()[0] for row in shapes.stdout.splitlines()[1:]] == list(CATALOG.shapes)
    rendered = generator_run(env, "render", "--output", str(tmp_path / "values"))
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    for path in sorted(paths.VALUES_DIR.rglob("*.yaml")):
        if path.parent.name != "examples":  # overlays by hand, held to the sizing by tests/chart/test_chart.py
            assert (tmp_path / "values" / path.relative_to(paths.VALUES_DIR)).read_text() == path.read_text(), path
    # DAPO is not in the chart's default veRL: the version comes from ppo-job's values.yaml, read without Helm.
    dapo = generator_run(env, "render", "seed-2gpu", "--algorithm", "dapo", "--output", str(tmp_path / "dapo"))
    assert dapo.returncode == 0, dapo.stderr
    assert yaml.safe_load((tmp_path / "dapo" / "seed-2gpu-dapo.yaml").read_text())["ppo-job"]["verlVersion"] == "0.9.1"


def test_check_without_helm_says_what_to_install_in_one_line(tmp_path: Path):
    env = without_helm(tmp_path)
    done = generator_run(env, "check", str(paths.VALUES_DIR / "seed-2gpu.yaml"))
    cached = tmp_path / "empty-cache" / "bin" / "helm4"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"check: no Helm found (no $HELM, no helm on PATH, nothing at {cached}): install Helm 3 " \
                          "or 4 (https://helm.sh/docs/intro/install/) or run `make helm`\n"


def test_check_names_a_helm_variable_that_is_no_helm(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HELM", str(tmp_path / "no-helm"))
    assert main(["check", str(paths.VALUES_DIR / "seed-2gpu.yaml"), str(paths.VALUES_DIR / "seed-2gpu.yaml")]) == 2
    assert capsys.readouterr().err == f"check: $HELM is {tmp_path / 'no-helm'}, which is not an executable file: " \
                                      "point HELM at a Helm 3 or 4 binary, or unset it to use the helm on PATH\n"


def test_check_finds_helm_in_the_variable_then_on_path_then_in_the_cache(tmp_path: Path, capsys, monkeypatch):
    for binary in PINNED_HELMS.values():
        assert binary.is_file(), f"{binary} is missing: run lab/scripts/setup.sh helm3 helm4"
    on_path, cache = tmp_path / "path", tmp_path / "cache"
    (cache / "bin").mkdir(parents=True)
    on_path.mkdir()
    (on_path / "helm").symlink_to(PINNED_HELMS["helm3"])
    (cache / "bin" / "helm4").symlink_to(PINNED_HELMS["helm4"])
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setenv("VERL_PPO_CACHE", str(cache))
    monkeypatch.setenv("HELM", str(PINNED_HELMS["helm4"]))
    seed = str(paths.VALUES_DIR / "seed-2gpu.yaml")
    found = []
    for step in ("variable", "path", "cache"):
        if step == "path":
            monkeypatch.delenv("HELM")
        if step == "cache":
            (on_path / "helm").unlink()
        found.append(helm_binary())
        assert main(["check", seed]) == 0, step  # that Helm renders the chart
        assert capsys.readouterr().out == f"{seed}: ok\n"
    assert found == [PINNED_HELMS["helm4"], on_path / "helm", cache / "bin" / "helm4"]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_the_chart_renders_the_algorithm_table_the_generator_reads(name):
    image = image_values("0.9.1")
    done = template(paths.CHART, HelmInputs(sets=(f"ppo-job.algorithm.name={name}", "ppo-job.verlVersion=0.9.1",
                                                  f"global.image.repository={image['repository']}",
                                                  f"global.image.tag={image['tag']}")))
    assert done.returncode == 0, done.stderr
    algorithm = ALGORITHMS[name]
    assert f"actor_rollout_ref.rollout.n={algorithm.responses_per_prompt}" in done.stdout
    assert ("critic.ppo_micro_batch_size_per_gpu=" in done.stdout) == algorithm.critic
    assert ("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=" in done.stdout) == algorithm.reference


@pytest.mark.parametrize("command", ["schema", "docs"])
def test_cli_generated_files_are_current(command, capsys):
    assert main([command, "--check"]) == 0
    assert capsys.readouterr().out == ""


def test_a_docs_table_is_written_between_its_markers_only():
    tables = {"t": (lambda: "| a |\n|---|\n| 1 |", "the table")}
    text = "before\n<!-- generated: t -->\nstale\n<!-- end: t -->\nafter\n"
    written = with_tables(text, Path("doc.md"), tables)
    assert written == ("before\n<!-- generated: t by `python -m generator docs` from the table: edit that, not this "
                       "table -->\n| a |\n|---|\n| 1 |\n<!-- end: t -->\nafter\n")
    assert with_tables(written, Path("doc.md"), tables) == written
    with pytest.raises(ValueError, match="doc.md: no <!-- generated: t"):
        with_tables("no markers\n", Path("doc.md"), tables)


def test_cli_drift_is_reported_then_written(tmp_path: Path, capsys, monkeypatch):
    from generator.cli import write_or_check

    monkeypatch.setattr(paths, "ROOT", tmp_path)
    stale, current = tmp_path / "stale.json", tmp_path / "current.json"
    current.write_text("{}")
    expected = {stale: '{"a": 1}', current: "{}"}
    assert write_or_check(expected, True, "make x") == 1
    assert capsys.readouterr().out == "stale.json is stale: run make x\n" and not stale.exists()
    assert write_or_check(expected, False, "make x") == 0
    assert capsys.readouterr().out == "wrote stale.json\nunchanged current.json\n"
    assert stale.read_text() == '{"a": 1}'
    assert write_or_check(expected, True, "make x") == 0


def test_cli_gpu_memory_item_splits_at_the_last_equals():
    from generator.cli import gpu_memory_item

    assert gpu_memory_item("NVIDIA-A10=24") == ("NVIDIA-A10", 24.0)
    assert gpu_memory_item("a=b=0.5") == ("a=b", 0.5)


def test_cli_discover_without_a_cluster_names_the_fix(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["discover", "--kubeconfig", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("discover: no cluster to read: ") and err.endswith("pass --kubeconfig or set KUBECONFIG\n")


def test_cli_without_a_command_shows_the_usage(capsys):
    with pytest.raises(SystemExit) as stopped:
        main([])
    assert stopped.value.code == 2 and "the following arguments are required: command" in capsys.readouterr().err


def test_the_node_types_doc_adds_the_catalogs_verl_release_to_its_image():
    """Issue 29: the node types' veRL and its image are named once (generator/catalog.yaml): the Dockerfile of
    docs/node-types.md adds that release to that image (the docs' tables are generated from the catalog)."""
    text = (paths.ROOT / "docs/node-types.md").read_text()
    release = CATALOG.verl
    assert f"FROM {release.image_repository}:{release.image_tag}\n" \
           f"RUN pip install --no-deps verl=={release.version} " in text


def test_the_guides_shape_keeps_the_charts_verl_and_the_others_run_the_catalogs():
    for shape, version, _ in sized_shapes(CATALOG, MODEL, ALGORITHMS["ppo"]):
        assert version == (default_verl_version() if shape.vendor_guide else CATALOG.verl.version), shape.name


def test_the_charts_default_image_is_in_the_image_table_with_a_ray_before_the_token():
    """files/images.yaml, read by the rulebook (Ray's token refused on an older Ray) and here: it knows the chart's
    default image, whose Ray predates token authentication, and not the Ray of the catalog's veRL image."""
    chart = yaml.safe_load((paths.CHART / "values.yaml").read_text())["global"]["image"]
    rays = verlversions.image_rays()
    assert rays[f"{chart['repository']}:{chart['tag']}"] == "<2.52.0"
    catalog = yaml.safe_load(paths.CATALOG.read_text())["verl"]["image"]
    assert f"{catalog['repository']}:{catalog['tag']}" not in rays


def test_the_image_table_gives_the_chart_and_the_catalog_images_their_veRL():
    """files/images.yaml's veRL, which the rulebook holds ppo-job.verlVersion to: the chart's default image runs the
    chart's default veRL, the catalog's image the catalog's veRL."""
    chart = yaml.safe_load((paths.CHART / "values.yaml").read_text())["global"]["image"]
    default_version = str(yaml.safe_load((paths.subchart_dir("ppo-job") / "values.yaml").read_text())["verlVersion"])
    verls = verlversions.image_verls()
    assert verls[f"{chart['repository']}:{chart['tag']}"] == default_version
    catalog = load_catalog().verl
    assert verls[f"{catalog.image_repository}:{catalog.image_tag}"] == catalog.version
    assert set(verls.values()) <= set(version_names())


def test_a_reader_that_stops_early_ends_the_command_quietly():
    """`python -m generator shapes | head -1`: the closed pipe ends it without a Python traceback."""
    shapes = subprocess.Popen([sys.executable, "-m", "generator", "shapes"], cwd=paths.ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert shapes.stdout is not None and shapes.stdout.readline().startswith(b"shape")
    shapes.stdout.close()
    _, err = shapes.communicate(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
