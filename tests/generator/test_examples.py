"""values/examples/ is what `python -m generator docs` writes: overlays of the generator's renders, not hand copies."""

from __future__ import annotations

import pytest
import yaml

from generator import paths
from generator.catalog import load_catalog
from generator.examples import EXAMPLES, differing, example_overlays, merged, overlay_body, rendered

RENDERED = """# the render's header
global:
  gpu:
    perNode: 2
    nodes: 2

ppo-job:
  model:
    path: /data/big
    # a comment of the block it precedes
    lora:
      rank: 32
  rollout:
    n: 5
    tolerations:
      - {"key": "a"}
  data:
    trainBatchSize: 256
"""
BASE = {"global": {"gpu": {"perNode": 2, "nodes": 2}},
        "ppo-job": {"model": {"path": "/data/small"}, "rollout": {"n": 1}, "data": {"trainBatchSize": 256},
                    "critic": {"ppoMicroBatchSizePerGpu": 4}}}


def test_every_example_is_written_as_docs_writes_it():
    for path, text in example_overlays().items():
        assert path.read_text() == text, f"{path}: run python -m generator docs"


def test_the_overlay_holds_only_what_differs_with_its_comments_and_blocks():
    full = yaml.safe_load(RENDERED)
    written = differing(BASE, full)
    assert written == {("ppo-job", "model", "path"), ("ppo-job", "model", "lora"), ("ppo-job", "rollout", "n"),
                       ("ppo-job", "rollout", "tolerations")}
    body = overlay_body(RENDERED, written)
    assert body == ["ppo-job:", "  model:", "    path: /data/big", "    # a comment of the block it precedes",
                    "    lora:", "      rank: 32", "  rollout:", "    n: 5", "    tolerations:", '      - {"key": "a"}']
    # The base's own keys (the critic's) stay; every key of the render is the render's.
    assert merged(BASE, yaml.safe_load("\n".join(body))) == merged(BASE, full)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_an_example_over_its_node_types_file_is_the_render(example):
    catalog = load_catalog()
    text = example_overlays(catalog)[paths.VALUES_DIR / "examples" / f"{example.name}.yaml"]
    base = yaml.safe_load((paths.VALUES_DIR / f"{example.shape}.yaml").read_text())
    assert merged(base, yaml.safe_load(text)) == merged(base, yaml.safe_load(rendered(example, catalog)))
    assert f"-f values/{example.shape}.yaml -f values/examples/{example.name}.yaml" in text
