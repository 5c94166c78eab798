"""Bad input fails early: each wrong values file is rejected by `helm template` (Helm 3 and 4: schema
or `fail`) and by `generator check`, and both messages name the field and the value, each a whole
token. A case says which layer stops it (the schema or the chart's rulebook) and must be stopped there:
a rule the schema already guards is reached past it (`--skip-schema-validation`), so removing the rule
fails its case."""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.cli import main as generator_main
from support import helm as helm_cli

TOS_BASE = {"type": "tos", "tos": {"bucket": "b", "region": "cn-beijing", "endpoint": "tos-cn-beijing.ivolces.com",
                                   "secretName": "s"}}


@dataclass
class Case:
    id: str
    values: dict
    field: str
    release: str = "verl-ppo"
    mentions: list[str] = field(default_factory=list)
    layer: str = "rule"  # what stops it: "rule" (the chart's rulebook) or "schema" (values.schema.json)
    value: str | None = None  # as the messages print it; None: the value at `field` in `values`, if one

    def printed_value(self) -> str | None:
        if self.value is not None:
            return self.value
        node: Any = self.values
        for part in self.field.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        if isinstance(node, (dict, list)):
            return None
        return '""' if node == "" else str(node).lower() if isinstance(node, bool) else str(node)


def job(**sections) -> dict:
    return {"ppo-job": sections}


CASES = [
    # Wrong types and ranges (schema).
    Case("batch-not-integer", job(data={"trainBatchSize": "256x"}), "ppo-job.data.trainBatchSize", layer="schema"),
    Case("memory-fraction-over-1", job(rollout={"gpuMemoryUtilization": 1.5}),
         "ppo-job.rollout.gpuMemoryUtilization", layer="schema"),
    Case("zero-nodes", {"global": {"gpu": {"nodes": 0}}}, "global.gpu.nodes", layer="schema"),
    Case("negative-lr", job(actor={"lr": -1}), "ppo-job.actor.lr", layer="schema"),
    Case("unknown-verl-version", job(verlVersion="0.5.0"), "ppo-job.verlVersion", layer="schema"),
    Case("unknown-rollout-engine", job(rollout={"name": "vlm"}), "ppo-job.rollout.name", layer="schema"),
    Case("unknown-storage-type", {"storage": {"type": "s3"}}, "storage.type", layer="schema"),
    Case("memory-not-a-quantity", {"raycluster": {"head": {"resources": {"memory": "100GB"}}}},
         "raycluster.head.resources.memory", layer="schema"),
    Case("cpu-not-a-quantity", {"raycluster": {"worker": {"resources": {"cpu": "lots"}}}},
         "raycluster.worker.resources.cpu", layer="schema"),
    Case("unknown-logger", job(trainer={"logger": ["consol"]}), "ppo-job.trainer.logger", layer="schema"),
    Case("monitor-setting-not-auto-true-false", {"observability": {"podMonitor": {"enabled": "yes"}}},
         "observability.podMonitor.enabled", layer="schema"),
    Case("nccl-variable-name", {"raycluster": {"nccl": {"IB_HCA": "mlx5"}}}, "raycluster.nccl.IB_HCA"),
    Case("source-range-not-cidr", {"raycluster": {"ingress": {"accessControl": {"sourceRanges": ["10.0.0.1"]}}}},
         "raycluster.ingress.accessControl.sourceRanges", layer="schema"),
    Case("relative-checkpoint-dir", job(trainer={"checkpointDir": "checkpoints/run"}),
         "ppo-job.trainer.checkpointDir", layer="schema"),
    # Unknown keys (misspellings) are errors, not silently ignored.
    Case("misspelled-micro-batch-key", job(actor={"ppoMicroBatchSize": 4}), "ppo-job.actor",
         mentions=["ppoMicroBatchSize"], layer="schema"),
    Case("unknown-top-level-key", {"raycluster": {"workers": {"replicas": 2}}}, "raycluster", mentions=["workers"], layer="schema"),
    # veRL's batch arithmetic (4 GPUs by default).
    Case("batch-not-divisible-by-gpus", job(data={"trainBatchSize": 250}), "ppo-job.data.trainBatchSize"),
    Case("mini-batch-larger-than-batch", job(actor={"ppoMiniBatchSize": 512}), "ppo-job.actor.ppoMiniBatchSize"),
    Case("mini-batch-below-one-per-gpu", job(actor={"ppoMiniBatchSize": 2}), "ppo-job.actor.ppoMiniBatchSize"),
    Case("micro-batch-not-dividing", job(actor={"ppoMicroBatchSizePerGpu": 3}),
         "ppo-job.actor.ppoMicroBatchSizePerGpu"),
    Case("critic-micro-batch-not-dividing", job(critic={"ppoMicroBatchSizePerGpu": 5}),
         "ppo-job.critic.ppoMicroBatchSizePerGpu"),
    Case("tensor-parallel-spans-nodes", job(rollout={"tensorModelParallelSize": 4}),
         "ppo-job.rollout.tensorModelParallelSize"),
    # GPU totals and the node type.
    Case("gpus-per-node-above-any-node", {"global": {"gpu": {"perNode": 17}}}, "global.gpu.perNode", layer="schema"),
    Case("nnodes-overridden-in-extra-args", job(extraArgs=["trainer.nnodes=3"]), "ppo-job.extraArgs[0]"),
    Case("autoscaling-range-excludes-training-workers",
         {"raycluster": {"worker": {"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 3}}}},
         "raycluster.worker.autoscaling"),
    Case("worker-cpu-over-allocatable", {"raycluster": {"worker": {"resources": {"cpu": "64"}}}},
         "raycluster.worker.resources.cpu"),
    Case("head-memory-over-allocatable", {"raycluster": {"head": {"resources": {"memory": "200Gi"}}}},
         "raycluster.head.resources.memory"),
    # Names KubeRay and the Job controller extend.
    Case("fullname-too-long", {"global": {"fullnameOverride": "a" * 46}}, "global.fullnameOverride", layer="schema"),
    Case("fullname-not-dns", {"global": {"fullnameOverride": "Verl_PPO"}}, "global.fullnameOverride", layer="schema"),
    Case("release-name-too-long", {}, "release name", release="r" + "x" * 45, value="r" + "x" * 45),
    Case("release-name-starts-with-a-digit", {}, "release name", release="9ppo", value="9ppo",
         mentions=["DNS-1035"]),
    Case("worker-group-name-invalid", {"raycluster": {"worker": {"groupName": "GPU_Workers"}}},
         "raycluster.worker.groupName", layer="schema"),
    # The dashboard runs arbitrary code.
    Case("head-service-outside-the-cluster", {"raycluster": {"head": {"serviceType": "LoadBalancer"}}},
         "raycluster.head.serviceType", mentions=["allowUnauthenticatedService"]),
    Case("ingress-without-access-control", {"raycluster": {"ingress": {"enabled": True}}}, "raycluster.ingress.enabled"),
    Case("dashboard-port-open-to-every-pod", {"raycluster": {"ingress": {"enabled": True, "allowUnauthenticated": True}}},
         "raycluster.networkPolicy.dashboardFrom", mentions=["dashboardFromAnywhere"]),
    Case("alb-with-nginx-only-allowlist",
         {"raycluster": {"ingress": {"enabled": True, "provider": "alb", "accessControl": {"sourceRanges": ["10.0.0.0/8"]}}}},
         "raycluster.ingress.accessControl"),
    # Storage: credentials only by Secret reference, one claim.
    Case("tos-without-secret", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "secretName": ""}}},
         "storage.tos.secretName"),
    Case("tos-without-bucket", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "bucket": ""}}},
         "storage.tos.bucket"),
    Case("tos-access-key-in-values", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "accessKeyId": "AK"}}},
         "storage.tos", mentions=["accessKeyId"], layer="schema"),
    Case("nas-without-server", {"storage": {"type": "nas"}}, "storage.nas.server"),
    Case("existing-claim-and-created-claim", {"global": {"storage": {"existingClaim": "data"}}},
         "global.storage.existingClaim"),
    Case("no-claim-at-all", {"storage": {"enabled": False}}, "global.storage.existingClaim"),
    # extraArgs: plain overrides only.
    Case("extra-arg-with-plus-plus", job(extraArgs=["++trainer.val_before_train=False"]), "ppo-job.extraArgs[0]"),
    Case("extra-arg-unsized-twin", job(extraArgs=["critic.ppo_micro_batch_size=8"]), "ppo-job.extraArgs[0]"),
    Case("extra-arg-not-key-value", job(extraArgs=["trainer.val_before_train"]), "ppo-job.extraArgs[0]"),
    # The preparation Job writes the run's inputs onto the shared volume, from a named source.
    Case("prepare-offline-without-path", job(prepare={"enabled": True, "source": "local",
                                                      "model": {"localPath": "/data/offline/model"}}),
         "ppo-job.prepare.dataset.localPath"),
    Case("prepare-model-off-the-volume", job(prepare={"enabled": True}, model={"path": "/models/qwen"}),
         "ppo-job.model.path", mentions=["/data/"]),
    Case("prepare-unknown-source", job(prepare={"enabled": True, "source": "s3"}), "ppo-job.prepare.source", layer="schema"),
    Case("working-dir-local-path", job(runtimeEnv={"workingDir": "./my-code"}), "ppo-job.runtimeEnv.workingDir", layer="schema"),
    # Algorithms: in the chosen veRL, with groups that have a baseline, sampled by the chosen rollout.
    Case("unknown-algorithm", job(algorithm={"name": "sac"}), "ppo-job.algorithm.name", layer="schema"),
    Case("dapo-before-verl-0.9", job(algorithm={"name": "dapo"}), "ppo-job.algorithm.name",
         mentions=["veRL 0.4.1", "verlVersion=0.9.1"]),
    Case("grpo-with-one-response", job(algorithm={"name": "grpo"}, rollout={"responsesPerPrompt": 1}),
         "ppo-job.rollout.responsesPerPrompt", mentions=["baseline"]),
    Case("hf-rollout-ignores-n-in-verl-0.3", job(verlVersion="0.3.0.post1", algorithm={"name": "grpo"},
                                                 rollout={"name": "hf"}),
         "ppo-job.rollout.responsesPerPrompt", mentions=["0.3.0.post1", "one response per prompt"]),
    Case("hf-rollout-gone-in-verl-0.9", job(verlVersion="0.9.1", rollout={"name": "hf"}), "ppo-job.rollout.name",
         mentions=["0.9.1"]),
    Case("grpo-batch-times-n-not-divisible", job(algorithm={"name": "grpo"}, data={"trainBatchSize": 250}),
         "ppo-job.data.trainBatchSize", mentions=["rollout.n (5)"]),
    Case("reward-function-not-a-python-file", job(reward={"functionPath": "/data/rewards/score"}),
         "ppo-job.reward.functionPath", layer="schema"),
]


def token(text: str) -> str:
    """`text` as a whole token: not part of a longer path, key or word."""
    return rf"(?<![\w./\[-]){re.escape(text)}(?![\w\[/-])"


# An element of a list field, as Helm's JSON pointer (/0) and generator check's path (.0) name it.
INDEX = r"(?:/\d+|\.\d+)?"


def named(output: str, case: Case) -> bool:
    """The field (a dotted path, or Helm's JSON pointer for a schema error) as a whole token, with its
    value where the message prints one (the rulebook's `  - field=value: ` and generator check's
    `field=value: `), and each mention as a word."""
    field, value = case.field, case.printed_value()
    if value is not None:
        found = re.search(token(f"{field}={value}") + ": ", output)
    else:
        found = re.search(token(field) + INDEX + "=", output)
    if not found and case.layer == "schema":  # Helm's schema errors name the field's JSON pointer, no value
        found = re.search(rf"'{re.escape('/' + field.replace('.', '/'))}{INDEX}'", output)
    return bool(found) and all(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", output) for word in case.mentions)


def stopped_by(output: str, case: Case) -> bool:
    """Helm stopped it where the case says: the rulebook lists it, or the schema refused the values."""
    if case.layer == "rule":
        return "value(s) to fix" in output and re.search(rf"^  - {token(case.field)}=", output, re.M) is not None
    return "schema" in output and "value(s) to fix" not in output


def values_file(tmp_path: Path, case: Case) -> Path:
    path = tmp_path / f"{case.id}.yaml"
    path.write_text(yaml.safe_dump(case.values))
    return path


def test_at_least_25_distinct_bad_inputs():
    assert len({case.id for case in CASES}) == len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_helm_template_rejects_and_names_the_field(helm, tmp_path, case):
    result = helm_cli.template(helm, "-f", str(values_file(tmp_path, case)), release=case.release)
    assert result.returncode != 0, f"{case.id} rendered:\n{result.stdout[:500]}"
    assert stopped_by(result.output, case), f"{case.id} not stopped by the {case.layer}: {result.output}"
    assert named(result.output, case), result.output


# Rules the schema guards too (defence for `--skip-schema-validation` and for a schema that drifts):
# reached past the schema, each must still name the field and the value.
BEHIND_THE_SCHEMA = [
    Case("relative-checkpoint-dir-past-the-schema", job(trainer={"checkpointDir": "checkpoints/run"}),
         "ppo-job.trainer.checkpointDir"),
    Case("unknown-verl-version-past-the-schema", job(verlVersion="0.5.0"), "ppo-job.verlVersion"),
    Case("fullname-not-dns-past-the-schema", {"global": {"fullnameOverride": "Verl_PPO"}}, "global.fullnameOverride",
         mentions=["DNS-1035"]),
    Case("fullname-too-long-past-the-schema", {"global": {"fullnameOverride": "a" * 46}}, "global.fullnameOverride",
         mentions=["46 characters"]),
]


@pytest.mark.parametrize("case", BEHIND_THE_SCHEMA, ids=[case.id for case in BEHIND_THE_SCHEMA])
def test_rules_behind_the_schema_still_fire(helm, tmp_path, case):
    result = helm_cli.template(helm, "-f", str(values_file(tmp_path, case)), "--skip-schema-validation")
    assert result.returncode != 0 and stopped_by(result.output, case), result.output
    assert named(result.output, case), result.output


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_generator_check_rejects_and_names_the_field(tmp_path, capsys, case):
    code = generator_main(["check", str(values_file(tmp_path, case)), "--release-name", case.release])
    output = capsys.readouterr().out
    assert code == 1, output
    assert named(output, case), output


def test_podmonitor_forced_without_the_operator_fails(helm):
    result = helm_cli.template(helm, "--set", "observability.podMonitor.enabled=true", monitoring=False)
    assert result.returncode != 0 and "observability.podMonitor.enabled" in result.output


def test_set_flags_are_checked_like_files(helm, capsys):
    assert helm_cli.template(helm, "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=7").returncode != 0
    assert generator_main(["check", "values/seed-2gpu.yaml", "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=7"]) == 1
    assert "ppo-job.actor.ppoMicroBatchSizePerGpu=7: must divide 16" in capsys.readouterr().out


# Five rules broken at once (the default seed shape: 4 GPUs, 37.5 CPU nodes).
MANY_BROKEN = {
    "ppo-job": {"data": {"trainBatchSize": 250}, "extraArgs": ["trainer.nnodes=3"]},
    "raycluster": {"head": {"serviceType": "LoadBalancer"}, "worker": {"resources": {"cpu": "64"}}},
    "storage": {"type": "nas"},
}
MANY_BROKEN_FIELDS = ["ppo-job.data.trainBatchSize", "ppo-job.extraArgs[0]", "raycluster.head.serviceType",
                      "raycluster.worker.resources.cpu", "storage.nas.server"]


def test_every_broken_rule_is_listed_in_one_failure(helm, tmp_path, capsys):
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(MANY_BROKEN))
    result = helm_cli.template(helm, "-f", str(path))
    assert result.returncode != 0
    assert "5 value(s) to fix" in result.stderr, result.stderr
    assert all(f"  - {field}=" in result.stderr for field in MANY_BROKEN_FIELDS), result.stderr
    assert generator_main(["check", str(path)]) == 1
    reported = [line.split(": ", 1)[1].split("=", 1)[0] for line in capsys.readouterr().out.splitlines()]
    assert sorted(reported) == sorted(MANY_BROKEN_FIELDS)


# `--set` forms Helm parses its own way: generator check hands them to Helm, so both agree.
SET_FORMS = [  # (arguments, the fields named, the layer that stops them)
    (["--set", "ppo-job.data.trainBatchSize=250,ppo-job.actor.ppoMiniBatchSize=512"],
     ["ppo-job.data.trainBatchSize", "ppo-job.actor.ppoMiniBatchSize"], "rule"),
    (["--set", "ppo-job.extraArgs[0]=trainer.nnodes=3"], ["ppo-job.extraArgs[0]"], "rule"),
    (["--set", "observability.podMonitor.additionalLabels.volcengine\\.vmp=on"], [], None),
    (["--set-string", "raycluster.head.rayStartParams.num-cpus=4"], [], None),
    (["--set-json", 'ppo-job.trainer.logger=["console","tensorbord"]'], ["ppo-job.trainer.logger"], "schema"),
]


@pytest.mark.parametrize("args,fields,layer", SET_FORMS,
                         ids=["comma-pair", "list-index", "escaped-dot", "set-string", "set-json"])
def test_check_and_helm_agree_on_set_forms(helm, capsys, args, fields, layer):
    result = helm_cli.template(helm, *args)
    code = generator_main(["check", *args])
    output = capsys.readouterr().out
    assert (result.returncode == 0) == (code == 0) == (not fields), (result.output, output)
    for field in fields:
        case = Case(field, {}, field, layer=layer)
        assert stopped_by(result.output, case) and named(result.output, case) and named(output, case), \
            (result.output, output)


def test_check_types_a_values_file_as_helm_does(helm, tmp_path, capsys):
    """`1e3` is a number to Helm (1000 passes every rule); PyYAML would have called it a string."""
    path = tmp_path / "exponent.yaml"
    path.write_text("ppo-job:\n  data:\n    trainBatchSize: 1e3\n")
    assert helm_cli.template(helm, "-f", str(path)).returncode == 0
    assert generator_main(["check", str(path)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("args, named_in_error", [
    (["{file}"], "cannot unmarshal array"),  # a values file that is a list, not a map
    (["--set", "ppo-job.extraArgs[x]=1"], 'parsing "x"'),  # --set syntax Helm refuses
], ids=["list-file", "set-index"])
def test_values_helm_cannot_read_are_named_before_any_rule(helm, tmp_path, capsys, args, named_in_error):
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    args = [str(listed) if arg == "{file}" else arg for arg in args]
    helm_args = ["-f", *args] if args[0] == str(listed) else args
    assert helm_cli.template(helm, *helm_args).returncode != 0
    assert generator_main(["check", *args]) == 1
    output = capsys.readouterr().out
    assert re.search(r": \(values\)=: .*" + re.escape(named_in_error), output), output
    assert "fix the values file or the --set syntax Helm names" in output


# Values exactly at each rule's limit (the default seed shape: 4 GPUs, 37.5 CPU / 125Gi nodes): valid,
# so a rule that fires one step early fails here.
AT_THE_LIMIT = {
    "one-sample-per-gpu": ["--set", "ppo-job.actor.ppoMiniBatchSize=4", "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=1",
                           "--set", "ppo-job.critic.ppoMicroBatchSizePerGpu=1"],
    "mini-batch-equals-batch": ["--set", "ppo-job.actor.ppoMiniBatchSize=256", "--set", "ppo-job.data.trainBatchSize=256"],
    "fullname-of-45": ["--set", "global.fullnameOverride=" + "a" * 45],
    "tensor-parallel-of-a-whole-node": ["--set", "ppo-job.rollout.tensorModelParallelSize=2"],
    "autoscaling-exactly-the-workers": ["--set", "raycluster.worker.autoscaling.enabled=true",
                                        "--set", "raycluster.worker.autoscaling.minReplicas=1",
                                        "--set", "raycluster.worker.autoscaling.maxReplicas=1"],
    "cpu-only-head-with-one-worker": ["--set", "raycluster.head.trainsOnHead=false", "--set", "global.gpu.nodes=1"],
    "pods-of-the-whole-allocatable": ["--set", "raycluster.worker.resources.cpu=37500m",
                                      "--set", "raycluster.head.resources.memory=125Gi"],
}


@pytest.mark.parametrize("case", sorted(AT_THE_LIMIT))
def test_values_at_a_rules_limit_pass(helm, capsys, case):
    result = helm_cli.template(helm, *AT_THE_LIMIT[case])
    assert result.returncode == 0, result.output
    assert generator_main(["check", *AT_THE_LIMIT[case]]) == 0, capsys.readouterr().out
