"""Tier 2: the session's cache of offline Helm runs (tests/support/rendercache.py) answers only for the
exact same inputs: a changed values file or chart template is rendered again, and nothing that reaches a
cluster or a registry is kept."""

import shutil

from support import helm as helm_cli
from support.rendercache import RenderCache, key_of
from support.tools import helm_binaries


def test_same_inputs_run_once_and_changed_inputs_run_again(tmp_path):
    chart = tmp_path / "verl-ppo"
    shutil.copytree(helm_cli.CHART, chart)
    values = tmp_path / "values.yaml"
    values.write_text("global:\n  fullnameOverride: cachecheckone\n")
    cache, command = RenderCache(), [str(helm_binaries()["helm4"]), "template", "r", str(chart), "-f", str(values)]
    first = cache.run(command, helm_cli.execute)
    assert cache.run(command, helm_cli.execute) == first and (cache.hits, cache.misses) == (1, 1)
    assert first[0] == 0 and "cachecheckone" in first[1], first[2]
    values.write_text("global:\n  fullnameOverride: cachechecktwo\n")
    second = cache.run(command, helm_cli.execute)
    assert cache.misses == 2 and "cachechecktwo" in second[1] and "cachecheckone" not in second[1]
    (chart / "templates" / "added.yaml").write_text('{{ fail "a changed template" }}\n')
    changed = cache.run(command, helm_cli.execute)
    assert cache.misses == 3 and changed[0] != 0 and "a changed template" in changed[2]


def test_commands_that_reach_a_cluster_or_a_registry_are_never_kept():
    helm = str(helm_binaries()["helm4"])
    assert key_of([helm, "template", "r", "oci://127.0.0.1:5000/charts/verl-ppo"]) is None
    assert key_of([helm, "template", "r", str(helm_cli.CHART), "--kubeconfig", "/tmp/kubeconfig", "--validate"]) is None
    assert key_of([helm, "install", "r", str(helm_cli.CHART), "--dry-run=client"]) is None
    assert key_of([helm, "template", "r", str(helm_cli.CHART)]) is not None
