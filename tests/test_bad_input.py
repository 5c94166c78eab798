"""Bad input fails early: each wrong values file is rejected by `helm template` (Helm 3 and 4: schema
or `fail`) and by `generator check`, and both messages name the field."""

from dataclasses import dataclass, field
from pathlib import Path

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


def job(**sections) -> dict:
    return {"ppo-job": sections}


CASES = [
    # Wrong types and ranges (schema).
    Case("batch-not-integer", job(data={"trainBatchSize": "256x"}), "ppo-job.data.trainBatchSize"),
    Case("memory-fraction-over-1", job(rollout={"gpuMemoryUtilization": 1.5}),
         "ppo-job.rollout.gpuMemoryUtilization"),
    Case("zero-nodes", {"global": {"gpu": {"nodes": 0}}}, "global.gpu.nodes"),
    Case("negative-lr", job(actor={"lr": -1}), "ppo-job.actor.lr"),
    Case("unknown-verl-version", job(verlVersion="0.5.0"), "ppo-job.verlVersion"),
    Case("unknown-rollout-engine", job(rollout={"name": "vlm"}), "ppo-job.rollout.name"),
    Case("unknown-storage-type", {"storage": {"type": "s3"}}, "storage.type"),
    Case("memory-not-a-quantity", {"raycluster": {"head": {"resources": {"memory": "100GB"}}}},
         "raycluster.head.resources.memory"),
    Case("cpu-not-a-quantity", {"raycluster": {"worker": {"resources": {"cpu": "lots"}}}},
         "raycluster.worker.resources.cpu"),
    Case("unknown-logger", job(trainer={"logger": ["consol"]}), "ppo-job.trainer.logger"),
    Case("monitor-setting-not-auto-true-false", {"observability": {"podMonitor": {"enabled": "yes"}}},
         "observability.podMonitor.enabled"),
    Case("nccl-variable-name", {"raycluster": {"nccl": {"IB_HCA": "mlx5"}}}, "raycluster.nccl"),
    Case("source-range-not-cidr", {"raycluster": {"ingress": {"accessControl": {"sourceRanges": ["10.0.0.1"]}}}},
         "raycluster.ingress.accessControl.sourceRanges"),
    Case("relative-checkpoint-dir", job(trainer={"checkpointDir": "checkpoints/run"}),
         "ppo-job.trainer.checkpointDir"),
    # Unknown keys (misspellings) are errors, not silently ignored.
    Case("misspelled-micro-batch-key", job(actor={"ppoMicroBatchSize": 4}), "ppo-job.actor",
         mentions=["ppoMicroBatchSize"]),
    Case("unknown-top-level-key", {"raycluster": {"workers": {"replicas": 2}}}, "raycluster", mentions=["workers"]),
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
    Case("gpus-per-node-above-any-node", {"global": {"gpu": {"perNode": 17}}}, "global.gpu.perNode"),
    Case("nnodes-overridden-in-extra-args", job(extraArgs=["trainer.nnodes=3"]), "ppo-job.extraArgs[0]"),
    Case("autoscaling-range-excludes-training-workers",
         {"raycluster": {"worker": {"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 3}}}},
         "raycluster.worker.autoscaling"),
    Case("worker-cpu-over-allocatable", {"raycluster": {"worker": {"resources": {"cpu": "64"}}}},
         "raycluster.worker.resources.cpu"),
    Case("head-memory-over-allocatable", {"raycluster": {"head": {"resources": {"memory": "200Gi"}}}},
         "raycluster.head.resources.memory"),
    # Names KubeRay and the Job controller extend.
    Case("fullname-too-long", {"global": {"fullnameOverride": "a" * 46}}, "global.fullnameOverride"),
    Case("fullname-not-dns", {"global": {"fullnameOverride": "Verl_PPO"}}, "global.fullnameOverride"),
    Case("release-name-too-long", {}, "release name", release="r" + "x" * 45),
    Case("worker-group-name-invalid", {"raycluster": {"worker": {"groupName": "GPU_Workers"}}},
         "raycluster.worker.groupName"),
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
         "storage.tos", mentions=["accessKeyId"]),
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
    Case("prepare-unknown-source", job(prepare={"enabled": True, "source": "s3"}), "ppo-job.prepare.source"),
    Case("working-dir-local-path", job(runtimeEnv={"workingDir": "./my-code"}), "ppo-job.runtimeEnv.workingDir"),
]


def named(output: str, case: Case) -> bool:
    pointer = "/" + case.field.replace(".", "/")
    return (case.field in output or pointer in output) and all(word in output for word in case.mentions)


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
SET_FORMS = [
    (["--set", "ppo-job.data.trainBatchSize=250,ppo-job.actor.ppoMiniBatchSize=512"],
     ["ppo-job.data.trainBatchSize", "ppo-job.actor.ppoMiniBatchSize"]),
    (["--set", "ppo-job.extraArgs[0]=trainer.nnodes=3"], ["ppo-job.extraArgs[0]"]),
    (["--set", "observability.podMonitor.additionalLabels.volcengine\\.vmp=on"], []),
    (["--set-string", "raycluster.head.rayStartParams.num-cpus=4"], []),
    (["--set-json", 'ppo-job.trainer.logger=["console","tensorbord"]'], ["ppo-job.trainer.logger"]),
]


@pytest.mark.parametrize("args,fields", SET_FORMS, ids=["comma-pair", "list-index", "escaped-dot", "set-string", "set-json"])
def test_check_and_helm_agree_on_set_forms(helm, capsys, args, fields):
    result = helm_cli.template(helm, *args)
    code = generator_main(["check", *args])
    output = capsys.readouterr().out
    assert (result.returncode == 0) == (code == 0) == (not fields), (result.output, output)
    for field in fields:
        case = Case(field, {}, field)
        assert named(result.output, case) and named(output, case), (result.output, output)


def test_check_types_a_values_file_as_helm_does(helm, tmp_path, capsys):
    """`1e3` is a number to Helm (1000 passes every rule); PyYAML would have called it a string."""
    path = tmp_path / "exponent.yaml"
    path.write_text("ppo-job:\n  data:\n    trainBatchSize: 1e3\n")
    assert helm_cli.template(helm, "-f", str(path)).returncode == 0
    assert generator_main(["check", str(path)]) == 0, capsys.readouterr().out
