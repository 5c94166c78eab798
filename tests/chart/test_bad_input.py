"""Bad input fails early: each wrong values file is rejected by `helm template` (Helm 3 and 4) and by
`generator check`. A case says which layer stops it, and must be stopped there: the values schema (Helm
refuses before any template renders and names the value's path in its own words, e.g. /ppo-job/rollout/n)
or the chart's cross-field rules (the rulebook's one failure). generator check names the field and the
value, each a whole token, and says how to fix it (a `Fix:` sentence of its own, not a pointer to the
README), as does the rulebook's failure. A rule the schema already guards is reached past it (Helm's
--skip-schema-validation), so removing the rule fails its case."""

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.cli import main as generator_main
from generator.schemafindings import shown
from support import helm as helm_cli
from support.tools import ROOT, image_values

TOS_BASE = {"type": "tos", "tos": {"bucket": "b", "region": "cn-beijing", "endpoint": "tos-cn-beijing.ivolces.com",
                                   "secretName": "s"}}


@dataclass
class Case:
    id: str
    values: dict
    field: str
    release: str = "verl-ppo"
    namespace: str = "training"
    mentions: list[str] = field(default_factory=list)
    layer: str = "rule"  # what stops it: "rule" (the chart's cross-field rules) or "schema" (the values schema)
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
        if isinstance(node, str) and re.search(r"[\x00-\x1f\x7f]", node):
            return json.dumps(node, ensure_ascii=False)  # as the messages print it: one line
        return '""' if node == "" else str(node).lower() if isinstance(node, bool) else str(node)


def job(**sections) -> dict:
    return {"ppo-job": sections}


def ray(**sections) -> dict:
    return {"raycluster": sections}


def merged(*trees: dict) -> dict:
    """The trees merged as Helm merges values files: maps key by key, the later tree's scalars and lists winning."""
    result: dict = {}
    for tree in trees:
        for key, value in tree.items():
            result[key] = merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) \
                else value
    return result


# What a credential looks like (the rulebook's one data file); each example is a case below.
CREDENTIAL_SHAPES = yaml.safe_load((ROOT / "charts" / "verl-ppo" / "files" / "credentials.yaml").read_text())
# An image the veRL table does not know: its veRL is the user's to pair.
OWN_IMAGE = {"repository": "registry.example.com/team/verl", "tag": "ray2.60-verl0.9.1"}
# Rollout metrics on veRL 0.9.1 with the image the table pairs it with: only the case's own fault fails.
ROLLOUT_091 = {"global": {"image": image_values("0.9.1"), "rolloutMetrics": {"enabled": True}},
               "ppo-job": {"verlVersion": "0.9.1"}}


# An Ingress with a valid access control and the NetworkPolicy's peers named, so only the case's own fault fails.
NGINX_LOCKED = {"enabled": True, "accessControl": {"basicAuthSecret": "dashboard-users"}}


def token_on(ray_sections: dict | None = None, **sections) -> dict:
    """Ray's token on an image whose Ray has it (the catalog's veRL image, with its veRL; the default image's Ray
    predates it), with `ray_sections` under raycluster and each other section (ppo-job=..., global entries merged)
    as given."""
    values = {"global": {"rayAuth": {"tokenSecret": "ray-token"}, "image": image_values("0.9.1")},
              "raycluster": {"rayVersion": "2.60.0", **(ray_sections or {})}, "ppo-job": {"verlVersion": "0.9.1"}}
    for name, section in sections.items():
        values[name] = {**values.get(name, {}), **section}
    return values


def pool(ray_pool: dict | None = None, trainer: dict | None = None, job_sections: dict | None = None,
         **pool_values) -> dict:
    """veRL 0.9.1's separate_async with a rollout pool (global.rolloutPool: enabled and `pool_values`), the trainer's
    further values, ppo-job's other sections and raycluster.rolloutPool as given."""
    values = {"global": {"image": image_values("0.9.1"), "rolloutPool": {"enabled": True, **pool_values}},
              "ppo-job": {"verlVersion": "0.9.1", "trainer": {"mode": "separate_async", **(trainer or {})},
                          **(job_sections or {})}}
    if ray_pool is not None:
        values["raycluster"] = {"rolloutPool": ray_pool}
    return values


# A pool on a node type of its own (so the same-node-type rule keeps out of the case).
OWN_NODES = {"nodeSelector": {"node.kubernetes.io/instance-type": "ecs.gni3cl.8xlarge"}}
# The pool's node type as render --rollout-shape writes it (the catalog's L20 node).
POOL_SHAPE = {"name": "l20-48g-x8", "gpuMemoryGiB": 48, "gpus": 8, "allocatable": {"cpu": "124", "memory": "900Gi"}}


def peers(**lists) -> dict:
    """The dashboard Ingress locked and the NetworkPolicy's peer lists as given."""
    return ray(ingress=NGINX_LOCKED, networkPolicy=lists)


CASES = [
    # Wrong types and ranges (schema).
    Case("batch-not-integer", job(data={"trainBatchSize": "256x"}), "ppo-job.data.trainBatchSize", layer="schema"),
    Case("memory-fraction-over-1", job(rollout={"gpuMemoryUtilization": 1.5}),
         "ppo-job.rollout.gpuMemoryUtilization", layer="schema"),
    Case("zero-nodes", {"global": {"gpu": {"nodes": 0}}}, "global.gpu.nodes", layer="schema"),
    Case("dashboard-timeout-below-its-floor", job(submitter={"dashboardTimeoutSeconds": 5}),
         "ppo-job.submitter.dashboardTimeoutSeconds", layer="schema"),
    Case("no-ray-cluster-and-no-dashboard-url", {"raycluster": {"enabled": False}}, "ppo-job.dashboardURL"),
    # A token budget packs whole rows (issue 27's sizing): one shorter than the longest row cannot hold it.
    Case("token-budget-shorter-than-a-row",
         job(actor={"useDynamicBsz": True}, rollout={"logProbMaxTokenLenPerGpu": 512}),
         "ppo-job.rollout.logProbMaxTokenLenPerGpu", mentions=["768"]),
    Case("token-budget-below-the-schema-floor", job(critic={"forwardMaxTokenLenPerGpu": 100}),
         "ppo-job.critic.forwardMaxTokenLenPerGpu", layer="schema"),
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
         "raycluster.ingress.accessControl.sourceRanges[0]", layer="schema"),
    Case("relative-checkpoint-dir", job(trainer={"checkpointDir": "checkpoints/run"}),
         "ppo-job.trainer.checkpointDir", layer="schema"),
    # Unknown keys (misspellings) are errors, not silently ignored.
    Case("misspelled-micro-batch-key", job(actor={"ppoMicroBatchSize": 4}), "ppo-job.actor.ppoMicroBatchSize",
         mentions=["ppoMicroBatchSizePerGpu"], layer="schema"),
    Case("unknown-top-level-key", {"raycluster": {"workers": {"replicas": 2}}}, "raycluster.workers",
         mentions=["worker"],
         layer="schema"),
    # A map or a list given as text: stopped before any template reads it (Helm renders the check first).
    Case("section-given-as-text", job(data="gsm8k"), "ppo-job.data", mentions=["a map"], layer="schema"),
    Case("node-given-as-text", ray(head="big"), "raycluster.head", mentions=["a map"], layer="schema"),
    Case("list-given-as-text", {"observability": {"dashboards": {"include": "default"}}},
         "observability.dashboards.include",
         mentions=["a list"], layer="schema"),
    Case("global-given-as-text", {"global": {"storage": "/data"}}, "global.storage", mentions=["a map"],
         layer="schema"),
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
    Case("ingress-without-access-control", {"raycluster": {"ingress": {"enabled": True}}},
         "raycluster.ingress.enabled"),
    Case("dashboard-port-open-to-every-pod",
         {"raycluster": {"ingress": {"enabled": True, "allowUnauthenticated": True}}},
         "raycluster.networkPolicy.dashboardFrom", mentions=["dashboardFromAnywhere"]),
    Case("alb-with-nginx-only-allowlist",
         {"raycluster": {"ingress": {"enabled": True, "provider": "alb",
                                     "accessControl": {"sourceRanges": ["10.0.0.0/8"]}}}},
         "raycluster.ingress.accessControl"),
    # Storage: credentials only by Secret reference, one claim.
    Case("tos-without-secret", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "secretName": ""}}},
         "storage.tos.secretName"),
    Case("tos-without-bucket", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "bucket": ""}}},
         "storage.tos.bucket"),
    Case("tos-access-key-in-values", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "accessKeyId": "AK"}}},
         "storage.tos.accessKeyId", mentions=["secretName"], layer="schema"),
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
    Case("prepare-unknown-source", job(prepare={"enabled": True, "source": "s3"}), "ppo-job.prepare.source",
         layer="schema"),
    Case("working-dir-local-path", job(runtimeEnv={"workingDir": "./my-code"}), "ppo-job.runtimeEnv.workingDir",
         layer="schema"),
    # Algorithms: in the chosen veRL, with groups that have a baseline, sampled by the chosen rollout.
    Case("unknown-algorithm", job(algorithm={"name": "sac"}), "ppo-job.algorithm.name", layer="schema"),
    Case("dapo-before-verl-0.9", job(algorithm={"name": "dapo"}), "ppo-job.algorithm.name",
         mentions=["veRL 0.4.1", "verlVersion=0.9.1"]),
    Case("grpo-with-one-response", job(algorithm={"name": "grpo"}, rollout={"responsesPerPrompt": 1}),
         "ppo-job.rollout.responsesPerPrompt", mentions=["baseline"]),
    Case("hf-rollout-ignores-n-in-verl-0.3", job(verlVersion="0.3.0.post1", algorithm={"name": "grpo"},
                                                 rollout={"name": "hf"}),
         "ppo-job.rollout.responsesPerPrompt", mentions=["0.3.0.post1", "one response per prompt"]),
    # Two responses, the fewest the HF rollout of veRL 0.3 ignores (PPO takes any n).
    Case("hf-rollout-ignores-two-responses-in-verl-0.3", job(verlVersion="0.3.0.post1", rollout={"name": "hf",
                                                                                             "responsesPerPrompt": 2}),
         "ppo-job.rollout.responsesPerPrompt", mentions=["0.3.0.post1", "one response per prompt"]),
    Case("hf-rollout-gone-in-verl-0.9", job(verlVersion="0.9.1", rollout={"name": "hf"}), "ppo-job.rollout.name",
         mentions=["0.9.1"]),
    # Issue 34: a trainer mode the version lacks, or one the legacy trainer would silently ignore.
    Case("colocate-async-in-verl-0.4", job(verlVersion="0.4.1", trainer={"mode": "colocate_async"}),
         "ppo-job.trainer.mode", mentions=["0.4.1", "0.9.1"]),
    Case("colocate-async-with-the-legacy-trainer", job(verlVersion="0.9.1", trainer={"mode": "colocate_async"},
                                                       extraArgs=["trainer.use_v1=false"]),
         "ppo-job.trainer.mode", mentions=["extraArgs[0]", "legacy"]),
    # Other spellings of false (ppo-job.hydraFalse); quoted, Hydra keeps the text, which still asks for the legacy one.
    *[Case(f"colocate-async-with-the-legacy-trainer-{name}", job(
        verlVersion="0.9.1", trainer={"mode": "colocate_async"}, extraArgs=[f"trainer.use_v1={spelling}"]),
           "ppo-job.trainer.mode", mentions=["extraArgs[0]", "legacy"])
      for name, spelling in [("single-quoted", "'false'"), ("double-quoted", '"false"'),
                             ("quoted-capital", "'False'"), ("upper-case", "FALSE"), ("null", "null")]],
    Case("hybrid-engine-off-quoted", job(verlVersion="0.9.1", extraArgs=['actor_rollout_ref.hybrid_engine="False"']),
         "ppo-job.extraArgs[0]", value='actor_rollout_ref.hybrid_engine="False"', mentions=["separate_async"]),
    # A switch neither plainly true nor false (ppo-job.rules.extraArgSwitch): Hydra keeps the text, veRL reads true.
    *[Case(f"{name}-not-plainly-a-boolean-{spelling_id}", job(verlVersion="0.9.1", extraArgs=[f"{key}={spelling}"]),
           "ppo-job.extraArgs[0]", value=f"{key}={spelling}", mentions=[f"{key}=true", f"{key}=false"])
      for name, key in [("use-v1", "trainer.use_v1"), ("hybrid-engine", "actor_rollout_ref.hybrid_engine")]
      for spelling_id, spelling in [("zero-zero", "00"), ("zero-single-quoted", "'0'"), ("zero-double-quoted", '"0"'),
                                    ("no", "no"), ("off", "off"), ("no-quoted", "'no'")]],
    # The legacy trainer reads no replay buffer: an interval other than the default or null would do nothing.
    Case("replay-buffer-poll-with-the-legacy-trainer", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", trainer={"rolloutPollSeconds": 0.5},
        extraArgs=["trainer.val_before_train=false", "trainer.use_v1=False"]), "ppo-job.trainer.rolloutPollSeconds",
         mentions=["ppo-job.extraArgs[1]=trainer.use_v1=False", "legacy", "remove ppo-job.extraArgs[1]",
                   "0.05 or null"]),
    Case("unknown-trainer-mode", job(trainer={"mode": "separate"}), "ppo-job.trainer.mode", layer="schema"),
    # The final output only from vLLM: veRL 0.9.1's agent loop manager, vLLM's setting, the sync trainer only.
    Case("final-output-in-verl-0.4", job(rollout={"finalOutputOnly": True}), "ppo-job.rollout.finalOutputOnly",
         mentions=["0.4.1", "0.9.1"]),
    Case("final-output-with-sglang", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", rollout={"name": "sglang", "finalOutputOnly": True}), "ppo-job.rollout.finalOutputOnly",
         mentions=["sglang", "rollout.name=vllm"]),
    Case("final-output-with-colocate-async", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", trainer={"mode": "colocate_async"}, rollout={"finalOutputOnly": True}),
         "ppo-job.rollout.finalOutputOnly", mentions=["colocate_async", "trainer.mode=sync"]),
    Case("final-output-with-legacy-trainer", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", rollout={"finalOutputOnly": True}, extraArgs=["trainer.use_v1=false"]),
         "ppo-job.rollout.finalOutputOnly", mentions=["extraArgs[0]", "finalOutputOnly=false"]),
    Case("final-output-not-a-boolean", job(rollout={"finalOutputOnly": "yes"}), "ppo-job.rollout.finalOutputOnly",
         layer="schema"),
    # Issue 36: the rollout pool and separate_async.
    Case("separate-async-in-verl-0.4", pool(job_sections={"verlVersion": "0.4.1"}), "ppo-job.trainer.mode",
         mentions=["0.4.1", "0.9.1"]),
    Case("separate-async-without-a-pool", job(verlVersion="0.9.1", trainer={"mode": "separate_async"}),
         "ppo-job.trainer.mode", mentions=["global.rolloutPool.enabled=true"]),
    Case("rollout-pool-without-separate-async", {"global": {"rolloutPool": {"enabled": True}}},
         "global.rolloutPool.enabled", mentions=["separate_async"]),
    Case("rollout-pool-smaller-than-one-replica", pool(OWN_NODES, perNode=1, job_sections={
        "rollout": {"tensorModelParallelSize": 2}}), "global.rolloutPool.perNode",
         mentions=["tensorModelParallelSize"]),
    Case("rollout-pool-replica-spans-its-nodes", pool(OWN_NODES, perNode=3, nodes=2, job_sections={
        "rollout": {"tensorModelParallelSize": 2}}), "ppo-job.rollout.tensorModelParallelSize",
         mentions=["global.rolloutPool.perNode"]),
    Case("rollout-pool-without-gpus", pool(perNode=0), "global.rolloutPool.perNode", layer="schema"),
    Case("rollout-pool-without-nodes", pool(nodes=0), "global.rolloutPool.nodes", layer="schema"),
    Case("rollout-pool-asks-more-gpus-than-the-shared-node-type", pool(perNode=4), "global.rolloutPool.perNode",
         mentions=["never schedule", "raycluster.rolloutPool.nodeSelector"]),
    Case("rollout-pool-starves-the-shared-node-type", pool(perNode=1), "global.rolloutPool.perNode",
         mentions=["idle", "raycluster.rolloutPool.nodeSelector"]),
    Case("rollout-pool-cpu-over-its-node-type", pool({**OWN_NODES, "gpuShape": POOL_SHAPE,
                                                      "resources": {"cpu": "150", "memory": "100Gi"}}),
         "raycluster.rolloutPool.resources.cpu", mentions=["raycluster.rolloutPool.gpuShape.allocatable.cpu"]),
    Case("rollout-pool-asks-more-gpus-than-its-node-type", pool({**OWN_NODES, "gpuShape": POOL_SHAPE}, perNode=16),
         "global.rolloutPool.perNode", mentions=["raycluster.rolloutPool.gpuShape.gpus", "perNode=8"]),
    Case("rollout-pool-takes-workers-memory-over-its-node-type",
         pool({**OWN_NODES, "gpuShape": {**POOL_SHAPE, "allocatable": {"cpu": "124", "memory": "64Gi"}}}),
         "raycluster.rolloutPool.resources.memory", mentions=["at most 64Gi"]),
    Case("separate-async-batch-not-sync-steps-of-mini-batches",
         pool(trainer={"separateAsync": {"parameterSyncStep": 3}}),
         "ppo-job.trainer.separateAsync.parameterSyncStep", mentions=["256", "parameterSyncStep=4"]),
    Case("separate-async-with-the-legacy-trainer", pool(job_sections={"extraArgs": ["trainer.use_v1=false"]}),
         "ppo-job.trainer.mode", mentions=["legacy"]),
    # The groups' Ray resources keep veRL's pools apart: the chart's, and set through its plug-ins.
    Case("pool-group-resources-set-by-hand", pool({**OWN_NODES, "rayStartParams": {"resources": '{"mine": 1}'}}),
         "raycluster.rolloutPool.rayStartParams.resources", mentions=["keeps veRL's pools apart"]),
    Case("worker-resources-set-by-hand-beside-a-pool",
         pool(OWN_NODES) | {"raycluster": {"rolloutPool": OWN_NODES,
                                           "worker": {"rayStartParams": {"resources": "{}"}}}},
         "raycluster.worker.rayStartParams.resources", mentions=["remove raycluster.worker.rayStartParams.resources"]),
    Case("pool-without-the-replay-buffer", pool(OWN_NODES, trainer={"rolloutPollSeconds": None}),
         "ppo-job.trainer.rolloutPollSeconds", value="null", mentions=["pins veRL's pools", "rolloutPollSeconds=2"]),
    Case("separate-async-with-naive-weight-sync", pool(trainer={"separateAsync": {"weightSyncBackend": "naive"}}),
         "ppo-job.trainer.separateAsync.weightSyncBackend", layer="schema"),
    Case("hybrid-engine-off-without-separate-async", job(verlVersion="0.9.1",
                                                         extraArgs=["actor_rollout_ref.hybrid_engine=false"]),
         "ppo-job.extraArgs[0]", value="actor_rollout_ref.hybrid_engine=false", mentions=["separate_async"]),
    Case("replay-buffer-polled-past-veRLs-own", job(trainer={"rolloutPollSeconds": 3}),
         "ppo-job.trainer.rolloutPollSeconds", layer="schema"),
    # veRL 0.3 and 0.4 poll no replay buffer: an interval other than the default or null would do nothing there.
    Case("replay-buffer-poll-on-verl-0.4", job(trainer={"rolloutPollSeconds": 0.5}),
         "ppo-job.trainer.rolloutPollSeconds", mentions=["0.4.1", "ppo-job.verlVersion=0.9.1"]),
    Case("replay-buffer-poll-on-verl-0.3", {"global": {"image": image_values("0.3.0.post1")}} | job(
        verlVersion="0.3.0.post1", trainer={"rolloutPollSeconds": 2}), "ppo-job.trainer.rolloutPollSeconds",
         mentions=["0.3.0.post1", "0.05 or null"]),
    Case("grpo-batch-times-n-not-divisible", job(algorithm={"name": "grpo"}, data={"trainBatchSize": 250}),
         "ppo-job.data.trainBatchSize", mentions=["rollout.n (5)"]),
    Case("reward-function-not-a-python-file", job(reward={"functionPath": "/data/rewards/score"}),
         "ppo-job.reward.functionPath", layer="schema"),
    # Shell: rayStartParams keys are words of KubeRay's `bash -lc` line (values are quoted, see ACCEPTED).
    *[Case(f"ray-start-key-{name}", ray(head={"rayStartParams": {key: "1"}}),
           "raycluster.head.rayStartParams." + (json.dumps(key) if "\n" in key else key))
      for name, key in [("newline", "num-gpus\nheadService"), ("space", "num gpus"), ("semicolon", "x;touch"),
                        ("upper-case", "Num-Gpus"), ("leading-dashes", "--block"), ("dollar", "$(id)")]],
    Case("ray-start-worker-key-quote", ray(worker={"rayStartParams": {"it's": "1"}}),
         "raycluster.worker.rayStartParams.it's"),
    Case("ray-start-value-a-map", ray(head={"rayStartParams": {"resources": {"a": 1}}}),
         "raycluster.head.rayStartParams.resources"),
    # YAML structure: names printed into objects are names.
    Case("token-secret-name-newline", job(prepare={"tokenSecret": {"name": "tok\noptional: true"}}),
         "ppo-job.prepare.tokenSecret.name"),
    Case("token-secret-key-slash", job(prepare={"tokenSecret": {"name": "t", "key": "a/b"}}),
         "ppo-job.prepare.tokenSecret.key"),
    Case("tos-secret-name-upper-case", {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "secretName": "TOS Creds"}}},
         "storage.tos.secretName"),
    Case("tos-secret-namespace-invalid",
         {"storage": {**TOS_BASE, "tos": {**TOS_BASE["tos"], "secretNamespace": "kube system"}}},
         "storage.tos.secretNamespace"),
    Case("image-pull-secret-with-space", {"global": {"imagePullSecrets": ["my secret"]}}, "global.imagePullSecrets[0]"),
    Case("existing-claim-invalid-name",
         {"global": {"storage": {"existingClaim": "Team Data"}}, "storage": {"enabled": False}},
         "global.storage.existingClaim"),
    Case("storage-class-with-space", {"storage": {"dynamic": {"storageClassName": "fast ssd"}}},
         "storage.dynamic.storageClassName"),
    Case("priority-class-newline", ray(priorityClassName="high\nx: y"), "raycluster.priorityClassName"),
    Case("basic-auth-secret-invalid", ray(ingress={"enabled": True, "accessControl": {"basicAuthSecret": "Users!"}}),
         "raycluster.ingress.accessControl.basicAuthSecret"),
    Case("dashboard-label-with-space", {"observability": {"dashboards": {"label": "grafana dashboard"}}},
         "observability.dashboards.label"),
    Case("dashboard-folder-annotation-colon", {"observability": {"dashboards": {"folderAnnotation": "a: b"}}},
         "observability.dashboards.folderAnnotation"),
    Case("extra-secret-env-name-dash", ray(extraSecretEnv={"MY-VAR": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.MY-VAR"),
    Case("extra-secret-env-without-key", ray(extraSecretEnv={"MY_VAR": {"secretName": "s"}}),
         "raycluster.extraSecretEnv.MY_VAR.key"),
    Case("wandb-secret-invalid-name", ray(credentials={"wandb": {"secretName": "W&B"}}),
         "raycluster.credentials.wandb.secretName"),
    Case("runtime-env-name-with-space", job(runtimeEnv={"env": {"MY VAR": "1"}}), "ppo-job.runtimeEnv.env.MY VAR"),
    # Hydra: paths arrive literally (see ACCEPTED), but must be absolute and free of backslashes and control characters.
    Case("model-path-relative", job(model={"path": "models/qwen"}), "ppo-job.model.path"),
    Case("model-path-home-tilde", job(model={"path": "~/qwen"}), "ppo-job.model.path"),
    Case("model-path-backslash", job(model={"path": "/data/a\\b"}), "ppo-job.model.path"),
    Case("model-path-newline", job(model={"path": "/data/qwen\ntrainer.nnodes=9"}), "ppo-job.model.path"),
    Case("critic-model-relative", job(critic={"modelPath": "critic"}), "ppo-job.critic.modelPath"),
    Case("train-files-relative", job(data={"trainFiles": "gsm8k/train.parquet"}), "ppo-job.data.trainFiles"),
    Case("val-files-tab", job(data={"valFiles": "/data/test\t.parquet"}), "ppo-job.data.valFiles"),
    Case("checkpoint-dir-backslash", job(trainer={"checkpointDir": "/data\\ckpt"}), "ppo-job.trainer.checkpointDir"),
    # Paths the run writes: on the shared volume after normalisation.
    Case("checkpoint-dir-off-the-volume", job(trainer={"checkpointDir": "/tmp/ckpt"}), "ppo-job.trainer.checkpointDir",
         mentions=["/data"]),
    Case("checkpoint-dir-climbs-out", job(trainer={"checkpointDir": "/data/../tmp/x"}), "ppo-job.trainer.checkpointDir",
         mentions=["/tmp/x"]),
    Case("checkpoint-dir-prefix-look-alike", job(trainer={"checkpointDir": "/database/ckpt"}),
         "ppo-job.trainer.checkpointDir"),
    Case("checkpoint-dir-other-mount", {"global": {"storage": {"mountPath": "/mnt/shared"}},
                                        "ppo-job": {"trainer": {"checkpointDir": "/data/ckpt"}}},
                                        "ppo-job.trainer.checkpointDir"),
    Case("experiment-named-dot-dot", job(trainer={"experimentName": ".."}), "ppo-job.trainer.experimentName"),
    Case("experiment-named-dot", job(trainer={"experimentName": "."}), "ppo-job.trainer.experimentName"),
    Case("experiment-with-slash", job(trainer={"experimentName": "a/../../b"}), "ppo-job.trainer.experimentName"),
    Case("project-named-dot-dot", job(trainer={"projectName": ".."}), "ppo-job.trainer.projectName"),
    Case("hydra-run-dir-off-the-volume", job(extraArgs=["hydra.run.dir=/tmp/hydra"]), "ppo-job.extraArgs[0]"),
    Case("hydra-sweep-dir-relative", job(extraArgs=["hydra.sweep.dir=multirun"]), "ppo-job.extraArgs[0]"),
    Case("rollout-dump-off-the-volume", job(extraArgs=["trainer.rollout_data_dir=/tmp/rollouts"]),
         "ppo-job.extraArgs[0]"),
    Case("validation-dump-climbs-out", job(extraArgs=["trainer.validation_data_dir=/data/../../etc"]),
         "ppo-job.extraArgs[0]"),
    Case("hydra-searchpath-elsewhere", job(extraArgs=["hydra.searchpath=[file:///etc/verl]"]), "ppo-job.extraArgs[0]"),
    Case("tensorboard-dir-off-the-volume", job(runtimeEnv={"env": {"TENSORBOARD_DIR": "/tmp/tb"}}),
         "ppo-job.runtimeEnv.env.TENSORBOARD_DIR"),
    # Side doors: every Service needs the opt-in and access control the dashboard has.
    Case("tensorboard-load-balancer", {"global": {"tensorboard": {"enabled": True, "serviceType": "LoadBalancer"}}},
         "global.tensorboard.serviceType", mentions=["allowUnauthenticatedService"]),
    Case("tensorboard-node-port", {"global": {"tensorboard": {"enabled": True, "serviceType": "NodePort"}}},
         "global.tensorboard.serviceType"),
    Case("head-node-port", ray(head={"serviceType": "NodePort"}), "raycluster.head.serviceType"),
    Case("tensorboard-path-without-ingress", {"global": {"tensorboard": {"enabled": True, "ingressPath": "/tb"}}},
         "global.tensorboard.ingressPath"),
    *[Case(f"annotation-overrides-{name}", ray(ingress={**NGINX_LOCKED, "annotations": {key: value}}),
           f"raycluster.ingress.annotations.{key}")
      for name, key, value in [("allowlist", "nginx.ingress.kubernetes.io/whitelist-source-range", "0.0.0.0/0"),
                               ("auth-secret", "nginx.ingress.kubernetes.io/auth-secret", "other"),
                               ("auth-type", "nginx.ingress.kubernetes.io/auth-type", "none"),
                               ("satisfy-any", "nginx.ingress.kubernetes.io/satisfy", "any")]],
    Case("source-range-every-ipv4", ray(ingress={**NGINX_LOCKED, "accessControl": {"sourceRanges": ["0.0.0.0/0"]}}),
         "raycluster.ingress.accessControl.sourceRanges", mentions=["not an access control"]),
    Case("source-range-every-ipv6", ray(ingress={**NGINX_LOCKED, "accessControl": {"sourceRanges": ["::/0"]}}),
         "raycluster.ingress.accessControl.sourceRanges"),
    *[Case(f"source-range-{name}", ray(ingress={"accessControl": {"sourceRanges": [cidr]}}),
           "raycluster.ingress.accessControl.sourceRanges[0]")
      for name, cidr in [("prefix-33", "10.0.0.0/33"), ("octet-256", "256.0.0.0/8"), ("host-name", "example.com/8"),
                         ("ipv6-prefix-129", "2001:db8::/129"), ("three-octets", "10.0.0/8")]],
    *[Case(f"ingress-host-{name}", ray(ingress={"host": host}), "raycluster.ingress.host")
      for name, host in [("with-scheme", "https://ray.example.com"), ("with-port", "ray.example.com:443"),
                         ("with-path", "ray.example.com/dash"), ("upper-case", "Ray.Example.com")]],
    Case("ingress-path-with-space", ray(ingress={"path": "/ray dash"}), "raycluster.ingress.path"),
    # Credentials: only by Secret reference.
    *[Case(f"literal-{name}", ray(**{where: [{"name": variable, "value": "x"}]} if where == "env" else
                                   {where: {"env": [{"name": variable, "value": "x"}]}}),
           f"raycluster.{where}.env[0]" if where != "env" else "raycluster.env[0]", mentions=["extraSecretEnv"])
      for name, where, variable in [("wandb-key", "env", "WANDB_API_KEY"), ("hf-token", "head", "HF_TOKEN"),
                                    ("password", "worker", "DB_PASSWORD"),
                                    ("aws-secret", "env", "AWS_SECRET_ACCESS_KEY"),
                                    ("access-key-id", "head", "AWS_ACCESS_KEY_ID"),
                                    ("client-secret", "worker", "OAUTH_CLIENT_SECRET")]],
    *[Case(f"runtime-env-{name}", job(runtimeEnv={"env": {variable: "x"}}), f"ppo-job.runtimeEnv.env.{variable}",
           mentions=["raycluster.extraSecretEnv"], value="(hidden)")
      for name, variable in [("wandb-key", "WANDB_API_KEY"), ("hf-token", "HF_TOKEN"), ("github-token", "GITHUB_TOKEN"),
                             ("password", "MLFLOW_TRACKING_PASSWORD"), ("api-key", "OPENAI_API_KEY")]],
    # Schema gaps and false acceptances.
    *[Case(f"cpu-{name}", ray(head={"resources": {"cpu": cpu}}), "raycluster.head.resources.cpu")
      for name, cpu in [("negative", -4), ("zero-string", "0"), ("zero-number", 0), ("zero-millis", "0m"),
                        ("negative-string", "-4")]],
    Case("memory-negative", ray(worker={"resources": {"memory": -1}}), "raycluster.worker.resources.memory"),
    Case("memory-with-space", ray(worker={"resources": {"memory": "100 Gi"}}), "raycluster.worker.resources.memory"),
    Case("image-tag-with-space", {"global": {"image": {"tag": "v1 latest"}}}, "global.image.tag"),
    Case("image-tag-with-newline", {"global": {"image": {"tag": "v1\nx"}}}, "global.image.tag"),
    Case("image-repository-with-space", {"global": {"image": {"repository": "my registry/verl"}}},
         "global.image.repository"),
    Case("submitter-image-tag-with-space", job(image={"tag": "a b"}), "ppo-job.image.tag"),
    Case("toleration-operator-exist", ray(tolerations=[{"key": "gpu", "operator": "Exist"}]),
         "raycluster.tolerations[0].operator"),
    Case("toleration-effect-unknown", ray(tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedul"}]),
         "raycluster.tolerations[0].effect"),
    Case("toleration-unknown-field", ray(tolerations=[{"key": "gpu", "operater": "Exists"}]),
         "raycluster.tolerations[0].operater"),
    Case("scrape-timeout-above-interval", {"observability": {"podMonitor": {"interval": "30s", "scrapeTimeout": "1m"}}},
         "observability.podMonitor.scrapeTimeout"),
    Case("scrape-interval-with-space", {"observability": {"podMonitor": {"interval": "30 s"}}},
         "observability.podMonitor.interval"),
    Case("submitter-cpu-not-a-quantity", job(submitter={"resources": {"limits": {"cpu": "lots"}}}),
         "ppo-job.submitter.resources.limits.cpu"),
    Case("submitter-resources-misspelled", job(submitter={"resources": {"limit": {"cpu": "1"}}}),
         "ppo-job.submitter.resources.limit"),
    Case("prepare-memory-not-a-quantity", job(prepare={"resources": {"requests": {"memory": "8GB"}}}),
         "ppo-job.prepare.resources.requests.memory"),
    Case("tensorboard-cpu-zero",
         {"global": {"tensorboard": {"resources": {"requests": {"cpu": "0", "memory": "1Gi"}}}}},
         "global.tensorboard.resources.requests.cpu"),
    Case("storage-size-with-space", {"storage": {"size": "200 GB"}}, "storage.size"),
    Case("env-overrides-pythonpath", ray(env=[{"name": "PYTHONPATH", "value": "/code"}]), "raycluster.env[0]",
         mentions=["pythonPath"]),
    Case("worker-env-overrides-pythonpath", ray(worker={"env": [{"name": "PYTHONPATH", "value": "/code"}]}),
         "raycluster.worker.env[0]"),
    # The Ray pods' grace period: Ray's drain gets it less its 15-s teardown, and the chart sets the drain's variable.
    Case("grace-period-below-rays-teardown", ray(terminationGracePeriodSeconds=10),
         "raycluster.terminationGracePeriodSeconds", layer="schema"),
    Case("grace-period-zero", ray(terminationGracePeriodSeconds=0), "raycluster.terminationGracePeriodSeconds",
         layer="schema"),
    Case("grace-period-past-an-hour", ray(terminationGracePeriodSeconds=86400),
         "raycluster.terminationGracePeriodSeconds", layer="schema"),
    Case("grace-period-with-a-unit", ray(terminationGracePeriodSeconds="45s"),
         "raycluster.terminationGracePeriodSeconds", layer="schema"),
    Case("grace-period-a-fraction", ray(terminationGracePeriodSeconds=45.5),
         "raycluster.terminationGracePeriodSeconds", layer="schema"),
    Case("env-overrides-the-drain-timeout",
         ray(env=[{"name": "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "value": "600"}]), "raycluster.env[0]",
         mentions=["raycluster.terminationGracePeriodSeconds"]),
    Case("head-env-overrides-the-drain-timeout",
         ray(head={"env": [{"name": "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "value": "0"}]}),
         "raycluster.head.env[0]", mentions=["raycluster.terminationGracePeriodSeconds"]),
    Case("extra-secret-env-overrides-the-drain-timeout",
         ray(extraSecretEnv={"RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S",
         value="RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"),
    *[Case(f"release-name-{name}", {}, "release name", release=name, mentions=["boolean"]) for name in ("no", "true",
                                                                                                        "on", "off")],
    Case("fullname-reads-as-boolean", {"global": {"fullnameOverride": "yes"}}, "global.fullnameOverride"),
    Case("prepare-endpoint-with-space", job(prepare={"endpoint": "https://hf mirror.com"}), "ppo-job.prepare.endpoint"),
    Case("mount-path-with-newline", {"global": {"storage": {"mountPath": "/data\nreadOnly: true"}}},
         "global.storage.mountPath"),
    Case("mount-path-with-space", {"global": {"storage": {"mountPath": "/shared data"}}}, "global.storage.mountPath"),
    # null deletes the default and the umbrella's schema cannot ask it back: the rulebook names it before any rule
    # that reads the path stops on a template error.
    Case("mount-path-null", {"global": {"storage": {"mountPath": None}}}, "global.storage.mountPath", value="null",
         mentions=["global.storage.mountPath=/data"]),
    Case("wandb-logger-without-its-secret", job(trainer={"logger": ["console", "wandb"]}), "ppo-job.trainer.logger",
         mentions=["raycluster.credentials.wandb.secretName"]),
    Case("wandb-logger-with-another-secret-in-env", job(trainer={"logger": ["console", "wandb"]}) | ray(
        env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}]),
        "ppo-job.trainer.logger"),
    Case("rdma-count-zero", ray(rdma={"enabled": True, "count": 0}), "raycluster.rdma.count"),
    # RayJob mode and queues (KubeRay's and Kueue's own refusals, caught before anything is applied).
    Case("unknown-mode", {"global": {"mode": "Job"}}, "global.mode", layer="schema"),
    Case("rayjob-without-its-submitter", {"global": {"mode": "RayJob"}, "ppo-job": {"enabled": False}}, "global.mode"),
    Case("rayjob-queued-keeps-its-cluster", {"global": {"mode": "RayJob"}, "raycluster": {"queue": {"kueue": "team-a"}},
                                             **job(rayJob={"shutdownAfterJobFinishes": False})},
         "ppo-job.rayJob.shutdownAfterJobFinishes"),
    # One second: the shortest TTL, so a rule that let a short one through fails here.
    Case("rayjob-ttl-without-shutdown", {"global": {"mode": "RayJob"},
                                         **job(rayJob={"shutdownAfterJobFinishes": False,
                                                       "ttlSecondsAfterFinished": 1})},
         "ppo-job.rayJob.ttlSecondsAfterFinished"),
    Case("rayjob-deletion-rules-and-shutdown", {"global": {"mode": "RayJob"}, **job(rayJob={"deletionStrategy": {
        "deletionRules": [{"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED"}}]}})},
         "ppo-job.rayJob.deletionStrategy"),
    Case("rayjob-foreign-dashboard", {"global": {"mode": "RayJob"}, **job(dashboardURL="http://other-head-svc:8265")},
         "ppo-job.dashboardURL"),
    Case("kueue-with-autoscaling", {"raycluster": {"queue": {"kueue": "team-a"}, "worker": {"autoscaling": {
        "enabled": True, "minReplicas": 1, "maxReplicas": 2}}}}, "raycluster.worker.autoscaling.enabled"),
    Case("kueue-elastic-without-autoscaling", {"raycluster": {"queue": {"kueue": "team-a", "elastic": True}}},
         "raycluster.queue.elastic", mentions=["autoscaling"]),
    Case("ray-token-without-ray-version", {"global": {"rayAuth": {"tokenSecret": "ray-token"}}},
         "raycluster.rayVersion",
         mentions=["2.52.0"]),
    Case("kueue-worker-group-named-head",
         {"raycluster": {"queue": {"kueue": "team-a"}, "worker": {"groupName": "head"}}},
         "raycluster.worker.groupName", mentions=["Kueue"]),
    Case("priority-without-queue", {"raycluster": {"queue": {"workloadPriorityClass": "high"}}},
         "raycluster.queue.workloadPriorityClass"),
    Case("gcs-fault-tolerance-without-redis", ray(gcsFaultTolerance={"enabled": True}),
         "raycluster.gcsFaultTolerance.redisAddress"),
    Case("redis-password-on-the-ray-start-line", ray(head={"rayStartParams": {"redis-password": "hunter2"}}),
         "raycluster.head.rayStartParams.redis-password", value="<hidden>", mentions=["passwordSecret"]),
    Case("gcs-redis-address-with-credentials",
         ray(gcsFaultTolerance={"enabled": True, "redisAddress": "redis://admin:hunter2@redis:6379"}),
         "raycluster.gcsFaultTolerance.redisAddress"),
    Case("gcs-redis-address-without-port", ray(gcsFaultTolerance={"enabled": True, "redisAddress": "redis.infra"}),
         "raycluster.gcsFaultTolerance.redisAddress"),
    Case("gcs-redis-password-secret-upper-case",
         ray(gcsFaultTolerance={"passwordSecret": {"secretName": "Redis_Auth"}}),
         "raycluster.gcsFaultTolerance.passwordSecret.secretName"),
    # Issue 28: values of one mode given in the other are refused, not ignored.
    Case("rayjob-ttl-in-raycluster-mode", job(rayJob={"ttlSecondsAfterFinished": 600}),
         "ppo-job.rayJob.ttlSecondsAfterFinished",
         mentions=["global.mode=RayJob"]),
    Case("rayjob-deadline-in-raycluster-mode", job(rayJob={"activeDeadlineSeconds": 3600}),
         "ppo-job.rayJob.activeDeadlineSeconds"),
    Case("rayjob-keeps-cluster-in-raycluster-mode", job(rayJob={"shutdownAfterJobFinishes": False}),
         "ppo-job.rayJob.shutdownAfterJobFinishes"),
    Case("stop-on-job-delete-in-rayjob-mode",
         {"global": {"mode": "RayJob"}, **job(submitter={"stopOnJobDelete": False})},
         "ppo-job.submitter.stopOnJobDelete", mentions=["global.mode=RayCluster"]),
    # Numbers past KubeRay's and the Job controller's int32 fields.
    Case("rayjob-ttl-past-int32", {"global": {"mode": "RayJob"}, **job(rayJob={"ttlSecondsAfterFinished": 2147483648})},
         "ppo-job.rayJob.ttlSecondsAfterFinished"),
    Case("rayjob-deadline-past-int32",
         {"global": {"mode": "RayJob"}, **job(rayJob={"activeDeadlineSeconds": 9999999999})},
         "ppo-job.rayJob.activeDeadlineSeconds"),
    Case("submitter-backoff-past-int32", job(submitter={"backoffLimit": 2147483648}), "ppo-job.submitter.backoffLimit"),
    Case("prepare-backoff-past-int32", job(prepare={"backoffLimit": 4294967296}), "ppo-job.prepare.backoffLimit"),
    Case("autoscaling-max-past-int32", ray(worker={"autoscaling": {"maxReplicas": 2147483648}}),
         "raycluster.worker.autoscaling.maxReplicas"),
    # Free text printed as label values.
    Case("volcano-queue-with-space", ray(queue={"volcano": "team a"}), "raycluster.queue.volcano"),
    Case("volcano-queue-too-long", ray(queue={"volcano": "q" * 64}), "raycluster.queue.volcano", value=shown("q" * 64)),
    Case("common-label-value-with-colon", {"global": {"commonLabels": {"team": "a: b"}}}, "global.commonLabels.team"),
    Case("head-label-key-with-space", ray(head={"labels": {"my label": "x"}}), "raycluster.head.labels.my label"),
    Case("node-selector-value-with-slash", ray(nodeSelector={"pool": "gpu/h800"}), "raycluster.nodeSelector.pool"),
    Case("podmonitor-label-value-with-space", {"observability": {"podMonitor": {"additionalLabels": {"team": "a b"}}}},
         "observability.podMonitor.additionalLabels.team"),
    # NetworkPolicy peers: none empty, none open to every namespace without the opt-in.
    Case("network-policy-empty-dashboard-peer", ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [{}]}),
         "raycluster.networkPolicy.dashboardFrom[0]"),
    Case("network-policy-empty-metrics-peer", ray(networkPolicy={"metricsFrom": [{}]}),
         "raycluster.networkPolicy.metricsFrom[0]"),
    Case("dashboard-peer-every-namespace",
         ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [{"namespaceSelector": {}}]}),
         "raycluster.networkPolicy.dashboardFrom[0]", mentions=["dashboardFromAnywhere"],
         value='{"namespaceSelector":{}}'),
    Case("dashboard-peer-every-namespace-some-pods", ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [
        {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "nginx"}}}]}),
        "raycluster.networkPolicy.dashboardFrom[0]",
         mentions=["dashboardFromAnywhere"]),
    Case("dashboard-peer-every-address",
         ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}),
         "raycluster.networkPolicy.dashboardFrom[0]", mentions=["dashboardFromAnywhere"]),
    # Issue 37: NetworkPolicy selectors and CIDRs typed as the API types them (a misspelled field would become {}, every
    # namespace), and a peer that admits everyone refused however it is spelled.
    Case("dashboard-peer-misspelled-selector-field",
         peers(dashboardFrom=[{"namespaceSelector": {"matchLabel": {"a": "b"}}}]),
         "raycluster.networkPolicy.dashboardFrom[0].namespaceSelector.matchLabel"),
    Case("metrics-peer-misspelled-pod-selector-field",
         peers(metricsFrom=[{"podSelector": {"matchLables": {"a": "b"}}}]),
         "raycluster.networkPolicy.metricsFrom[0].podSelector.matchLables"),
    Case("dashboard-peer-label-value-with-space",
         peers(dashboardFrom=[{"namespaceSelector": {"matchLabels": {"team": "a b"}}}]),
         "raycluster.networkPolicy.dashboardFrom[0].namespaceSelector.matchLabels.team"),
    Case("dashboard-peer-label-key-too-long", peers(dashboardFrom=[{"podSelector": {"matchLabels": {"k" * 64: "x"}}}]),
         f"raycluster.networkPolicy.dashboardFrom[0].podSelector.matchLabels.{'k' * 64}", value="x"),
    Case("dashboard-peer-expression-unknown-operator", peers(dashboardFrom=[{"namespaceSelector": {
        "matchExpressions": [{"key": "team", "operator": "Equals", "values": ["a"]}]}}]),
         "raycluster.networkPolicy.dashboardFrom[0].namespaceSelector.matchExpressions[0].operator"),
    Case("dashboard-peer-expression-key-with-space", peers(dashboardFrom=[{"namespaceSelector": {
        "matchExpressions": [{"key": "my team", "operator": "Exists"}]}}]),
         "raycluster.networkPolicy.dashboardFrom[0].namespaceSelector.matchExpressions[0].key"),
    Case("dashboard-peer-cidr-without-prefix", peers(dashboardFrom=[{"ipBlock": {"cidr": "10.0.0.0"}}]),
         "raycluster.networkPolicy.dashboardFrom[0].ipBlock.cidr"),
    Case("dashboard-peer-cidr-host-name", peers(dashboardFrom=[{"ipBlock": {"cidr": "lb.example.com/32"}}]),
         "raycluster.networkPolicy.dashboardFrom[0].ipBlock.cidr"),
    Case("metrics-peer-except-not-a-cidr",
         peers(metricsFrom=[{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/33"]}}]),
         "raycluster.networkPolicy.metricsFrom[0].ipBlock.except[0]"),
    Case("dashboard-peer-exists-on-the-namespace-name", peers(dashboardFrom=[{"namespaceSelector": {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]}}]),
         "raycluster.networkPolicy.dashboardFrom[0]", mentions=["dashboardFromAnywhere"]),
    Case("dashboard-peer-namespaces-not-in-a-list", peers(dashboardFrom=[{"namespaceSelector": {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                              "values": ["kube-system"]}]}}]),
         "raycluster.networkPolicy.dashboardFrom[0]", mentions=["dashboardFromAnywhere"]),
    Case("dashboard-peer-every-ipv6-address", peers(dashboardFrom=[{"ipBlock": {"cidr": "::/0"}}]),
         "raycluster.networkPolicy.dashboardFrom[0]", mentions=["dashboardFromAnywhere"]),
    Case("dashboard-peers-two-halves-of-ipv4", peers(dashboardFrom=[{"ipBlock": {"cidr": "0.0.0.0/1"}},
                                                                   {"ipBlock": {"cidr": "128.0.0.0/1"}}]),
         "raycluster.networkPolicy.dashboardFrom", value="0.0.0.0/1,128.0.0.0/1", mentions=["dashboardFromAnywhere"]),
    Case("dashboard-peers-cover-ipv6-in-three", peers(dashboardFrom=[
        {"ipBlock": {"cidr": "8000::/1"}}, {"ipBlock": {"cidr": "::/2"}}, {"ipBlock": {"cidr": "4000::/2"}}]),
         "raycluster.networkPolicy.dashboardFrom", value="8000::/1,::/2,4000::/2"),
    # The KubeRay operator's peer: names printed as text, label keys bounded.
    Case("kuberay-operator-namespace-a-number", ray(networkPolicy={"kubeRayOperator": {"namespace": 1234}}),
         "raycluster.networkPolicy.kubeRayOperator.namespace"),
    Case("kuberay-operator-namespace-upper-case", ray(networkPolicy={"kubeRayOperator": {"namespace": "KubeRay"}}),
         "raycluster.networkPolicy.kubeRayOperator.namespace"),
    Case("kuberay-operator-label-name-too-long",
         ray(networkPolicy={"kubeRayOperator": {"podLabels": {"team/" + "n" * 64: "x"}}}),
         "raycluster.networkPolicy.kubeRayOperator.podLabels.team/" + "n" * 64, value="x"),
    # Ray's token: its variables are the chart's in every env list; the image must have a Ray that has it; TensorBoard's
    # Ingress path is no part of what the token guards.
    Case("ray-token-turned-off-in-env", token_on({"env": [{"name": "RAY_AUTH_MODE", "value": "disabled"}]}),
         "raycluster.env[0]", value="RAY_AUTH_MODE", mentions=["global.rayAuth.tokenSecret"]),
    Case("ray-token-from-another-secret-in-worker-env", token_on({"worker": {"env": [
        {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "mine", "key": "t"}}}]}}),
         "raycluster.worker.env[0]", value="RAY_AUTH_TOKEN"),
    Case("ray-token-file-in-head-env",
         token_on({"head": {"env": [{"name": "RAY_AUTH_TOKEN_PATH", "value": "/tmp/t"}]}}),
         "raycluster.head.env[0]", value="RAY_AUTH_TOKEN_PATH"),
    Case("ray-token-in-extra-secret-env",
         token_on({"extraSecretEnv": {"RAY_AUTH_TOKEN": {"secretName": "mine", "key": "t"}}}),
         "raycluster.extraSecretEnv.RAY_AUTH_TOKEN", value="RAY_AUTH_TOKEN"),
    Case("ray-token-turned-off-in-runtime-env", token_on(**job(runtimeEnv={"env": {"RAY_AUTH_MODE": "disabled"}})),
         "ppo-job.runtimeEnv.env.RAY_AUTH_MODE", value="disabled"),
    Case("ray-kubernetes-tokens-in-runtime-env",
         token_on(**job(runtimeEnv={"env": {"RAY_ENABLE_K8S_TOKEN_AUTH": "true"}})),
         "ppo-job.runtimeEnv.env.RAY_ENABLE_K8S_TOKEN_AUTH", value="true"),
    Case("ray-token-on-the-default-image", {"global": {"rayAuth": {"tokenSecret": "ray-token"}},
                                            "raycluster": {"rayVersion": "2.60.0"}},
         "global.rayAuth.tokenSecret", mentions=["2.52.0"]),
    Case("ray-token-on-the-default-image-in-rayjob-mode",
         {"global": {"mode": "RayJob", "rayAuth": {"tokenSecret": "ray-token"}},
          "raycluster": {"rayVersion": "2.52.0"}},
         "global.rayAuth.tokenSecret"),
    Case("tensorboard-path-behind-the-token-alone",
         token_on({"ingress": {"enabled": True}, "networkPolicy": {"dashboardFromAnywhere": True}},
                  **{"global": {"tensorboard": {"enabled": True, "ingressPath": "/tensorboard"}}}),
         "global.tensorboard.ingressPath", mentions=["global.tensorboard.ingressAllowUnauthenticated"]),
    Case("tensorboard-path-behind-the-token-on-an-alb",
         token_on({"ingress": {"enabled": True, "provider": "alb"},
                   "networkPolicy": {"dashboardFrom": [{"ipBlock": {"cidr": "10.0.0.0/16"}}]}},
                  **{"global": {"tensorboard": {"enabled": True, "ingressPath": "/tb"}}}),
         "global.tensorboard.ingressPath"),
    Case("tensorboard-opt-in-without-a-path", {"global": {"tensorboard": {"ingressAllowUnauthenticated": True}}},
         "global.tensorboard.ingressAllowUnauthenticated"),
    # dashboardURL: not beside the release's own cluster, a real port.
    Case("dashboard-url-beside-own-cluster", job(dashboardURL="http://other-head-svc.ray.svc:8265"),
         "ppo-job.dashboardURL",
         mentions=["raycluster.enabled=false"]),
    Case("dashboard-url-port-zero", {"raycluster": {"enabled": False}, **job(dashboardURL="http://head:0")},
         "ppo-job.dashboardURL"),
    Case("dashboard-url-port-past-65535", {"raycluster": {"enabled": False}, **job(dashboardURL="http://head:65536")},
         "ppo-job.dashboardURL"),
    # The preparation Job: what each hub client reads, no credentials in its spec, sources on the volume.
    Case("prepare-hf-endpoint-without-scheme", job(prepare={"enabled": True, "endpoint": "hf-mirror.com"}),
         "ppo-job.prepare.endpoint", mentions=["https://hf-mirror.com"]),
    Case("prepare-modelscope-domain-as-url", job(prepare={"enabled": True, "source": "modelscope", "endpoint": "https://modelscope.cn",
                                                          "dataset": {"id": "modelscope/gsm8k"}}),
                                                          "ppo-job.prepare.endpoint",
         mentions=["MODELSCOPE_DOMAIN"]),
    Case("prepare-endpoint-with-credentials",
         job(prepare={"enabled": True, "endpoint": "https://user:hunter2@hf-mirror.com"}),
         "ppo-job.prepare.endpoint", mentions=["tokenSecret"]),
    Case("prepare-endpoint-port-past-65535", job(prepare={"endpoint": "https://hf-mirror.com:70000"}),
         "ppo-job.prepare.endpoint"),
    Case("prepare-format-math-for-gsm8k",
         job(prepare={"enabled": True, "dataset": {"format": "math", "id": "openai/gsm8k"}}),
         "ppo-job.prepare.dataset.format", mentions=["format=gsm8k"]),
    Case("prepare-format-gsm8k-for-math",
         job(prepare={"enabled": True, "dataset": {"format": "gsm8k", "id": "DigitalLearningGmbH/MATH-lighteval"}}),
         "ppo-job.prepare.dataset.format"),
    Case("prepare-local-path-off-the-volume",
         job(prepare={"enabled": True, "source": "local", "dataset": {"localPath": "/tmp/gsm8k"},
                      "model": {"localPath": "/data/offline/model"}}),
         "ppo-job.prepare.dataset.localPath", mentions=["/data"]),
    Case("prepare-local-path-climbs-out",
         job(prepare={"enabled": True, "source": "local", "dataset": {"localPath": "/data/offline/gsm8k"},
                      "model": {"localPath": "/data/../etc"}}),
         "ppo-job.prepare.model.localPath"),
    Case("prepare-dataset-id-option", job(prepare={"dataset": {"id": "--help"}}), "ppo-job.prepare.dataset.id"),
    Case("prepare-model-id-option", job(prepare={"model": {"id": "-rf"}}), "ppo-job.prepare.model.id"),
    # Paths: the reward file is where it says.
    Case("reward-path-climbs-out", job(reward={"functionPath": "/data/../etc/reward.py"}),
         "ppo-job.reward.functionPath",
         mentions=["/etc/reward.py"]),
    Case("reward-path-with-dot-dot-on-the-volume", job(reward={"functionPath": "/data/rewards/../score.py"}),
         "ppo-job.reward.functionPath"),
    # Environment: the chart's variables stay the chart's; a plain credential is refused wherever it is.
    Case("env-overrides-tensorboard-dir", ray(head={"env": [{"name": "TENSORBOARD_DIR", "value": "/data/tb"}]}),
         "raycluster.head.env[0]", mentions=["global.tensorboard.enabled"]),
    Case("env-overrides-otel-endpoint",
         ray(env=[{"name": "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "value": "http://x:4318"}]),
         "raycluster.env[0]", mentions=["raycluster.tracing.startupHook.otlpEndpoint"]),
    Case("env-duplicates-nccl",
         ray(nccl={"NCCL_DEBUG": "INFO"}, worker={"env": [{"name": "NCCL_DEBUG", "value": "WARN"}]}),
         "raycluster.worker.env[0]", mentions=["raycluster.nccl.NCCL_DEBUG"]),
    Case("extra-secret-env-overrides-pythonpath", ray(extraSecretEnv={"PYTHONPATH": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.PYTHONPATH", value="PYTHONPATH"),
    Case("extra-secret-env-overrides-wandb-credentials",
         ray(credentials={"wandb": {"secretName": "wandb"}},
             extraSecretEnv={"WANDB_API_KEY": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.WANDB_API_KEY", value="WANDB_API_KEY"),
    Case("literal-hf-token-value", ray(env=[{"name": "HUB", "value": "hf_abcdefghijklmnopqrstuvwxyz0123"}]),
         "raycluster.env[0]",
         mentions=["extraSecretEnv"]),
    Case("literal-url-with-password",
         ray(worker={"env": [{"name": "DATABASE_URL", "value": "postgres://app:hunter2@db:5432/x"}]}),
         "raycluster.worker.env[0]", mentions=["extraSecretEnv"]),
    Case("runtime-env-openai-key-value", job(runtimeEnv={"env": {"LLM_JUDGE": "sk-abcdefghijklmnopqrstuvwxyz"}}),
         "ppo-job.runtimeEnv.env.LLM_JUDGE", value="(hidden)", mentions=["raycluster.extraSecretEnv"]),
    # Issue 37: what a careless user still got through. The shared volume's mount path is a directory of its own.
    *[Case(f"mount-path-{name}", {"global": {"storage": {"mountPath": path}}}, "global.storage.mountPath",
           mentions=[mounted]) for name, path, mounted in [
        ("root", "/", "/dev/shm"), ("ray-logs", "/tmp/ray", "/tmp/ray"), ("above-ray-logs", "/tmp", "/tmp/ray"),
        ("inside-ray-logs", "/tmp/ray/data", "/tmp/ray"), ("shared-memory", "/dev/shm", "/dev/shm"),
        ("above-the-code", "/workspace", "/workspace/verl")]],
    # What the preparation Job writes stays on the volume once normalised.
    Case("prepare-model-climbs-out", job(prepare={"enabled": True}, model={"path": "/data/../etc/qwen"}),
         "ppo-job.model.path", mentions=["/etc/qwen"]),
    Case("prepare-train-files-climb-out", job(prepare={"enabled": True},
                                              data={"trainFiles": "/data/gsm8k/../../tmp/train.parquet"}),
         "ppo-job.data.trainFiles", mentions=["/tmp/train.parquet"]),
    # An image repository carries no tag or digest: the chart appends the tag.
    Case("image-repository-with-tag", {"global": {"image": {"repository": "registry.example.com/verl:latest"}}},
         "global.image.repository", layer="schema"),
    Case("image-repository-with-digest", {"global": {"image": {"repository": "verl@sha256:0123abcd"}}},
         "global.image.repository", layer="schema"),
    Case("submitter-image-repository-with-tag", job(image={"repository": "busybox:1.36"}), "ppo-job.image.repository",
         layer="schema"),
    Case("sidecar-image-repository-with-tag",
         {"global": {"rolloutMetrics": {"image": {"repository": "quay.io/prometheus/prometheus:v3.16.0"}}}},
         "global.rolloutMetrics.image.repository", layer="schema"),
    # Memory above zero; a volume's size with its unit.
    *[Case(f"memory-zero-{name}", ray(head={"resources": {"memory": memory}}), "raycluster.head.resources.memory",
           layer="schema") for name, memory in [("string", "0"), ("gibibytes", "0Gi"), ("decimal", "0.0Mi")]],
    Case("memory-zero-exponent", ray(worker={"resources": {"memory": "0e9"}}), "raycluster.worker.resources.memory",
         value="0", layer="schema"),
    Case("storage-size-bare-number", {"storage": {"size": 200}}, "storage.size", mentions=["storage.size=200Gi"]),
    Case("storage-size-bare-string", {"storage": {"size": "500"}}, "storage.size"),
    Case("storage-size-bare-large-number", {"storage": {"size": 2000000000000}}, "storage.size"),
    # The release's namespace is a namespace name.
    *[Case(f"release-namespace-{name}", {}, "release namespace", namespace=namespace, value=namespace)
      for name, namespace in [("upper-case", "Team_A"), ("with-dot", "team.a"), ("too-long", "n" * 64)]],
    # Settings another one makes meaningless are refused, not dropped.
    Case("nas-server-with-tos", {"storage": {**TOS_BASE, "nas": {"server": "nas.example.com"}}}, "storage.nas.server",
         mentions=["storage.type=nas"]),
    Case("tos-bucket-with-dynamic", {"storage": {"tos": {"bucket": "b"}}}, "storage.tos.bucket"),
    Case("storage-class-with-nas", {"storage": {"type": "nas", "nas": {"server": "nas.example.com"},
                                                "dynamic": {"storageClassName": "fast"}}},
         "storage.dynamic.storageClassName"),
    *[Case(f"critic-model-with-{name}", job(algorithm={"name": name}, critic={"modelPath": "/data/critic"}),
           "ppo-job.critic.modelPath", mentions=["algorithm.name=ppo"]) for name in ("grpo", "rloo")],
    # A variable once per container.
    Case("env-twice-common-and-worker", ray(env=[{"name": "MY_FLAG", "value": "1"}],
                                            worker={"env": [{"name": "MY_FLAG", "value": "2"}]}),
         "raycluster.worker.env[0]", value="MY_FLAG", mentions=["raycluster.env[0]"]),
    Case("env-twice-in-the-head",
         ray(head={"env": [{"name": "MY_FLAG", "value": "1"}, {"name": "MY_FLAG", "value": "2"}]}),
         "raycluster.head.env[1]", value="MY_FLAG"),
    Case("env-and-secret-env", ray(env=[{"name": "MY_FLAG", "value": "1"}],
                                   extraSecretEnv={"MY_FLAG": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.MY_FLAG", value="MY_FLAG"),
    # Labels the chart, KubeRay or Kueue set are theirs.
    Case("common-label-chart-name", {"global": {"commonLabels": {"app.kubernetes.io/name": "mine"}}},
         "global.commonLabels.app.kubernetes.io/name", value="mine"),
    Case("common-label-release-pod-label", {"global": {"commonLabels": {"verl-ppo.io/release": "other"}}},
         "global.commonLabels.verl-ppo.io/release", value="other"),
    Case("worker-label-kuberay", ray(worker={"labels": {"ray.io/node-type": "head"}}),
         "raycluster.worker.labels.ray.io/node-type", value="head", mentions=["KubeRay"]),
    Case("podmonitor-label-chart-instance",
         {"observability": {"podMonitor": {"additionalLabels": {"app.kubernetes.io/instance": "x"}}}},
         "observability.podMonitor.additionalLabels.app.kubernetes.io/instance", value="x"),
    Case("common-label-kueue-queue", {"global": {"commonLabels": {"kueue.x-k8s.io/queue-name": "team-a"}}},
         "global.commonLabels.kueue.x-k8s.io/queue-name", value="team-a", mentions=["raycluster.queue"]),
    Case("annotation-kueue-elastic", ray(annotations={"kueue.x-k8s.io/elastic-job": "true"}),
         "raycluster.annotations.kueue.x-k8s.io/elastic-job", value="true"),
    Case("head-label-kueue-priority", ray(head={"labels": {"kueue.x-k8s.io/priority-class": "high"}}),
         "raycluster.head.labels.kueue.x-k8s.io/priority-class", value="high"),
    # PodMonitors look where the release's Ray pods are.
    Case("podmonitor-other-namespace",
         {"observability": {"podMonitor": {"namespaceSelector": {"matchNames": ["monitoring"]}}}},
         "observability.podMonitor.namespaceSelector.matchNames", value="monitoring", mentions=["training"]),
    Case("podmonitor-other-namespaces",
         {"observability": {"podMonitor": {"namespaceSelector": {"matchNames": ["default", "ray"]}}}},
         "observability.podMonitor.namespaceSelector.matchNames", value="default,ray"),
    # The veRL version the image runs (files/verl-versions.yaml's images).
    Case("verl-0.9.1-on-the-default-image", job(verlVersion="0.9.1"), "ppo-job.verlVersion",
         mentions=["verlai/verl", "global.image.tag=vllm024.dev2", "0.4.1"]),
    Case("verl-0.3-on-the-node-types-image",
         {"global": {"image": image_values("0.9.1")}} | job(verlVersion="0.3.0.post1"),
         "ppo-job.verlVersion", mentions=["verlVersion=0.9.1"]),
    Case("verl-0.4.1-on-the-node-types-image", {"global": {"image": image_values("0.9.1")}} | job(verlVersion="0.4.1"),
         "ppo-job.verlVersion",
         mentions=["global.image.repository=ai-containers-cn-beijing.cr.volces.com/deeplearning/verl"]),
    # extraArgs: one Hydra override each, of a veRL key the chart does not own.
    *[Case(f"extra-arg-{name}", job(extraArgs=[arg]), "ppo-job.extraArgs[0]",
           value=json.dumps(arg) if "\n" in arg else arg, mentions=[word])
      for name, arg, word in [
          ("command-substitution", "trainer.experiment_name=$(hostname)", "$(...)"),
          ("backticks-and-substitution", "trainer.project_name=run-$(date)", "$(...)"),
          ("two-overrides-by-space", "trainer.total_epochs=2 trainer.save_freq=5", "two overrides"),
          ("two-overrides-by-newline", "trainer.total_epochs=2\ntrainer.save_freq=5", "two overrides"),
          ("stray-single-quote", "trainer.experiment_name='run", "stray quote"),
          ("stray-double-quote", 'trainer.experiment_name=run"1', "stray quote"),
          ("sweep", "actor_rollout_ref.actor.entropy_coeff=0.0,0.01", "sweep"),
          ("sweep-of-words", "actor_rollout_ref.actor.loss_agg_mode=token-mean,seq-mean", "sweep"),
          ("hydra-chdir", "hydra.job.chdir=True", "Hydra's own"),
          ("hydra-verbose", "hydra.verbose=true", "Hydra's own"),
          ("not-a-verl-section", "trainr.val_before_train=False", "sections"),
          ("top-level-unknown", "seed=1", "sections"),
          ("chart-owned-estimator", "algorithm.adv_estimator=grpo", "whatever the current values render"),
          ("chart-owned-dynamic-batches", "actor_rollout_ref.actor.use_dynamic_bsz=True", "whatever the current"),
          ("chart-owned-checkpointing", "actor_rollout_ref.model.enable_gradient_checkpointing=False", "whatever"),
          ("chart-owned-kl-loss", "actor_rollout_ref.actor.use_kl_loss=True", "whatever the current values"),
          ("chart-owned-offload", "actor_rollout_ref.actor.fsdp_config.param_offload=True", "whatever the current")]],
    Case("extra-arg-chart-owned-rollout-metrics", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", extraArgs=["actor_rollout_ref.rollout.prometheus.enable=True"]), "ppo-job.extraArgs[0]"),
    # Credentials by shape, whatever the name (charts/verl-ppo/files/credentials.yaml), and DB_PASS by name.
    Case("literal-db-pass", ray(env=[{"name": "DB_PASS", "value": "hunter2"}]), "raycluster.env[0]", value="DB_PASS",
         mentions=["extraSecretEnv"]),
    Case("runtime-env-db-pass", job(runtimeEnv={"env": {"DB_PASS": "hunter2"}}), "ppo-job.runtimeEnv.env.DB_PASS",
         value="(hidden)", mentions=["extraSecretEnv"]),
    *[Case(f"credential-shape-{index}-{where}",
           ray(worker={"env": [{"name": "SETTING", "value": example}]}) if where == "ray" else
           job(runtimeEnv={"env": {"SETTING": example}}),
           "raycluster.worker.env[0]" if where == "ray" else "ppo-job.runtimeEnv.env.SETTING",
           value="SETTING" if where == "ray" else "(hidden)", mentions=["extraSecretEnv"])
      for index, example in enumerate(example for shape in CREDENTIAL_SHAPES["values"] for example in shape["examples"])
      for where in ("ray", "job")],
    # The run's environment may not replace what the chart sets on the Ray pods.
    Case("runtime-env-pythonpath", job(runtimeEnv={"env": {"PYTHONPATH": "/code"}}),
         "ppo-job.runtimeEnv.env.PYTHONPATH",
         value="PYTHONPATH", mentions=["raycluster.pythonPath"]),
    Case("runtime-env-nccl-of-the-chart",
         ray(nccl={"NCCL_DEBUG": "WARN"}) | job(runtimeEnv={"env": {"NCCL_DEBUG": "INFO"}}),
         "ppo-job.runtimeEnv.env.NCCL_DEBUG", value="NCCL_DEBUG", mentions=["raycluster.nccl.NCCL_DEBUG"]),
    # A node type's GPUs bound global.gpu.perNode.
    Case("gpus-per-node-above-the-seed-node", {"global": {"gpu": {"perNode": 4}}}, "global.gpu.perNode",
         mentions=["raycluster.gpuShape.gpus"]),
    Case("gpus-per-node-above-an-a10-node", {"global": {"gpu": {"perNode": 8, "nodes": 1}},
                                             "raycluster": {"gpuShape": {"name": "a10-24g-x4", "gpus": 4}}},
         "global.gpu.perNode", mentions=["global.gpu.perNode=4"]),
    # Rollout metrics where something reads them, the rollout dashboard with its metrics, the head kept Guaranteed.
    Case("rollout-metrics-without-observability", ROLLOUT_091 | {"observability": {"enabled": False}},
         "global.rolloutMetrics.enabled", mentions=["observability.enabled=false"]),
    Case("rollout-metrics-with-podmonitors-off", ROLLOUT_091 | {"observability": {"podMonitor": {"enabled": False}}},
         "global.rolloutMetrics.enabled", mentions=["observability.podMonitor.enabled=false"]),
    Case("rollout-metrics-on-an-external-cluster",
         ROLLOUT_091 | {"raycluster": {"enabled": False}} | job(verlVersion="0.9.1", dashboardURL="http://head:8265"),
         "global.rolloutMetrics.enabled", mentions=["raycluster.enabled=false"]),
    Case("rollout-dashboard-without-metrics", {"observability": {"dashboards": {"include": ["default", "rollout"]}}},
         "observability.dashboards.include", value="default,rollout"),
    Case("rollout-dashboard-alone-without-metrics", {"observability": {"dashboards": {"include": ["rollout"]}}},
         "observability.dashboards.include", value="rollout"),
    Case("rollout-sidecar-cpu-limit-above-request",
         merged(ROLLOUT_091, {"global": {"rolloutMetrics": {"resources": {"limits": {"cpu": "1",
                                                                                      "memory": "512Mi"}}}}}),
         "global.rolloutMetrics.resources.limits.cpu", mentions=["Guaranteed"]),
    Case("rollout-sidecar-memory-limit-above-request",
         merged(ROLLOUT_091, {"global": {"rolloutMetrics": {"resources": {"limits": {"cpu": "200m",
                                                                                      "memory": "2Gi"}}}}}),
         "global.rolloutMetrics.resources.limits.memory"),
    # Inert values: refused, not ignored.
    Case("operator-namespace-in-raycluster-mode", ray(networkPolicy={"kubeRayOperator": {"namespace": "ray-system"}}),
         "raycluster.networkPolicy.kubeRayOperator.namespace", mentions=["global.mode=RayJob"]),
    Case("operator-labels-in-raycluster-mode",
         ray(networkPolicy={"kubeRayOperator": {"podLabels": {"app": "kuberay"}}}),
         "raycluster.networkPolicy.kubeRayOperator.podLabels", value='{"app":"kuberay"}'),
    Case("ppo-kl-coef-on-verl-0.4.1", job(algorithm={"klCoef": 0.01}), "ppo-job.algorithm.klCoef",
         mentions=["use_kl_in_reward"]),
    Case("ppo-kl-coef-on-verl-0.9.1", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", algorithm={"klCoef": 0.05}), "ppo-job.algorithm.klCoef"),
    # LoRA (ppo-job.model.lora, ppo-job.critic.lora): the versions that read it, an adapter needs a rank and the
    # volume, modules the model's family has.
    Case("lora-on-verl-without-lora", job(verlVersion="0.3.0.post1", model={"path": "/data/m", "lora": {"rank": 32}}),
         "ppo-job.model.lora.rank", mentions=["0.9.1"]),
    Case("lora-exclude-modules-on-verl-0-4",
         job(model={"path": "/data/m", "lora": {"rank": 8, "excludeModules": ["o_proj"]}}),
         "ppo-job.model.lora.excludeModules", value='["o_proj"]', mentions=["0.9.1"]),
    Case("critic-lora-adapter-on-verl-0-4", job(critic={"lora": {"rank": 8, "adapterPath": "/data/critic"}}),
         "ppo-job.critic.lora.adapterPath", mentions=["0.9.1"]),
    Case("lora-adapter-with-rank-zero",
         job(verlVersion="0.9.1", model={"path": "/data/m", "lora": {"adapterPath": "/data/a"}}),
         "ppo-job.model.lora.adapterPath", mentions=["ppo-job.model.lora.rank"]),
    Case("lora-adapter-off-the-volume",
         job(verlVersion="0.9.1", model={"path": "/data/m", "lora": {"rank": 8, "adapterPath": "/data/../tmp/a"}}),
         "ppo-job.model.lora.adapterPath", mentions=["/tmp/a"]),
    Case("lora-target-module-qwen-lacks",
         job(model={"path": "/data/Qwen2.5-7B-Instruct", "lora": {"rank": 8, "targetModules": ["q_proj", "qkv_proj"]}}),
         "ppo-job.model.lora.targetModules", value='["q_proj","qkv_proj"]', mentions=["qkv_proj", "all-linear"]),
    Case("lora-excluded-module-phi3-lacks",
         job(verlVersion="0.9.1",
             model={"path": "/data/models/Phi-3-mini/", "lora": {"rank": 8, "excludeModules": ["q_proj"]}}),
         "ppo-job.model.lora.excludeModules", value='["q_proj"]', mentions=["qkv_proj"]),
    Case("lora-rank-past-vllm", job(model={"path": "/data/m", "lora": {"rank": 1024}}), "ppo-job.model.lora.rank"),
    Case("lora-target-modules-a-word", job(model={"path": "/data/m", "lora": {"rank": 8, "targetModules": "q_proj"}}),
         "ppo-job.model.lora.targetModules"),
    Case("lora-module-name-with-space",
         job(model={"path": "/data/m", "lora": {"rank": 8, "targetModules": ["q_proj v_proj"]}}),
         "ppo-job.model.lora.targetModules", value='["q_proj v_proj"]'),
    Case("critic-lora-layered-summon", job(critic={"lora": {"layeredSummon": True}}),
         "ppo-job.critic.lora.layeredSummon"),
    # Tried as careless and hostile users would, the newest surfaces (the adversary's round after issue 37).
    # The rollout pool's env, labels, annotations, NCCL and ray start line are held to the training groups' rules.
    *[Case(f"rollout-pool-env-{name}", pool(OWN_NODES | {"env": entries, **extra}),
           f"raycluster.rolloutPool.env[{index}]", value=entries[index]["name"], mentions=mentions)
      for name, entries, extra, index, mentions in [
          ("replaces-python-path", [{"name": "PYTHONPATH", "value": "/tmp"}], {}, 0, ["raycluster.pythonPath"]),
          ("replaces-the-drain-timeout", [{"name": "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "value": "1"}], {}, 0,
           ["raycluster.terminationGracePeriodSeconds"]),
          ("replaces-its-nccl", [{"name": "NCCL_IB_HCA", "value": "mlx4"}], {"nccl": {"NCCL_IB_HCA": "mlx5"}}, 0,
           ["raycluster.rolloutPool.nccl.NCCL_IB_HCA"]),
          ("literal-credential", [{"name": "HF_TOKEN", "value": "x"}], {}, 0, ["extraSecretEnv"]),
          ("credential-by-shape",
           [{"name": "POOL_SETTING", "value": CREDENTIAL_SHAPES["values"][0]["examples"][0]}], {}, 0,
           ["extraSecretEnv"]),
          ("twice", [{"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}, {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"}],
           {}, 1, ["raycluster.rolloutPool.env[0]"])]],
    Case("rollout-pool-env-turns-the-token-off",
         token_on({"rolloutPool": {**OWN_NODES, "env": [{"name": "RAY_AUTH_MODE", "value": "disabled"}]}},
                  **{"global": {"rolloutPool": {"enabled": True}}, "ppo-job": {"trainer": {"mode": "separate_async"}}}),
         "raycluster.rolloutPool.env[0]", value="RAY_AUTH_MODE", mentions=["global.rayAuth.tokenSecret"]),
    Case("worker-env-and-extra-secret-env-set-one-name",
         ray(worker={"env": [{"name": "MLFLOW_RUN", "value": "1"}]},
             extraSecretEnv={"MLFLOW_RUN": {"secretName": "s", "key": "k"}}),
         "raycluster.extraSecretEnv.MLFLOW_RUN", value="MLFLOW_RUN", mentions=["raycluster.worker.env[0]"]),
    *[Case(f"rollout-pool-{kind}-{name}", pool(OWN_NODES | {kind: {key: "x"}}), f"raycluster.rolloutPool.{kind}.{key}",
           mentions=mentions)
      for kind, name, key, mentions in [("labels", "ray-group", "ray.io/group", ["KubeRay operator"]),
                                        ("labels", "chart-name", "app.kubernetes.io/component", []),
                                        ("labels", "kueue-queue", "kueue.x-k8s.io/queue-name", ["raycluster.queue"]),
                                        ("annotations", "kueue-topology", "kueue.x-k8s.io/podset-required-topology",
                                         ["raycluster.queue"])]],
    Case("rollout-pool-nccl-variable-name", pool(OWN_NODES | {"nccl": {"IB_HCA": "mlx5"}}),
         "raycluster.rolloutPool.nccl.IB_HCA", mentions=["raycluster.rolloutPool.env"]),
    Case("rollout-pool-redis-password-on-the-start-line",
         pool(OWN_NODES | {"rayStartParams": {"redis-password": "pw"}}),
         "raycluster.rolloutPool.rayStartParams.redis-password", value="<hidden>"),
    Case("rollout-pool-named-as-the-training-workers", pool(OWN_NODES | {"groupName": "workergroup"}),
         "raycluster.rolloutPool.groupName"),
    Case("rollout-pool-named-head-under-kueue",
         merged(pool(OWN_NODES | {"groupName": "head"}), ray(queue={"kueue": "team-a"})),
         "raycluster.rolloutPool.groupName", mentions=["Kueue"]),
    # A null deletes the chart's default (Helm drops null keys): where that default is needed, refused by name.
    Case("grace-period-null", ray(terminationGracePeriodSeconds=None), "raycluster.terminationGracePeriodSeconds",
         value="null"),
    *[Case(f"null-{name}", values, field, layer="schema", value='""')
      for name, values, field in [
          ("lora-alpha", job(model={"path": "/data/m", "lora": {"rank": 8, "alpha": None}}),
           "ppo-job.model.lora.alpha"),
          ("lora-target-modules", job(model={"path": "/data/m", "lora": {"rank": 8, "targetModules": None}}),
           "ppo-job.model.lora.targetModules"),
          ("critic-lora-alpha", job(critic={"lora": {"rank": 8, "alpha": None}}), "ppo-job.critic.lora.alpha"),
          ("weight-sync-backend", pool(OWN_NODES, trainer={"separateAsync": {"weightSyncBackend": None}}),
           "ppo-job.trainer.separateAsync.weightSyncBackend"),
          ("parameter-sync-step", pool(OWN_NODES, trainer={"separateAsync": {"parameterSyncStep": None}}),
           "ppo-job.trainer.separateAsync.parameterSyncStep"),
          ("rollout-pool-nodes", pool(OWN_NODES, nodes=None), "global.rolloutPool.nodes"),
          ("rollout-pool-group-name", pool(OWN_NODES | {"groupName": None}), "raycluster.rolloutPool.groupName"),
          # The third adversary round: each rendered <nil> or 0 into veRL's command, or <nil> into its checkpoint path.
          *[(f"{section}-{key}", job(**{section: {key: None}}), f"ppo-job.{section}.{key}")
            for section, key in [("actor", "lr"), ("actor", "ppoMicroBatchSizePerGpu"), ("critic", "lr"),
                                 ("critic", "ppoMicroBatchSizePerGpu"), ("rollout", "gpuMemoryUtilization"),
                                 ("rollout", "logProbMicroBatchSizePerGpu"), ("rollout", "name"),
                                 ("rollout", "tensorModelParallelSize"), ("ref", "logProbMicroBatchSizePerGpu"),
                                 ("algorithm", "klCoef"), ("trainer", "logger"), ("trainer", "projectName"),
                                 ("trainer", "experimentName"), ("trainer", "saveFreq"), ("trainer", "testFreq"),
                                 ("trainer", "totalEpochs"), ("trainer", "resumeMode"), ("trainer", "mode")]]]],
    # LoRA: the critic's dropped by a critic-free algorithm; excluded modules that leave nothing to adapt.
    *[Case(f"critic-lora-for-{name}", job(algorithm={"name": name}, critic={"lora": {"rank": 8}}),
           "ppo-job.critic.lora.rank", mentions=["algorithm.name=ppo", "ppo-job.model.lora"])
      for name in ("grpo", "rloo")],
    Case("lora-excludes-every-target",
         job(verlVersion="0.9.1", model={"path": "/data/m", "lora": {"rank": 8, "targetModules": ["q_proj", "v_proj"],
                                                                      "excludeModules": ["v_proj", "q_proj"]}}),
         "ppo-job.model.lora.excludeModules", value='["v_proj","q_proj"]', mentions=["q_proj, v_proj"]),
    Case("lora-excludes-every-linear-module-of-qwen",
         job(verlVersion="0.9.1", model={"path": "/data/Qwen2.5-7B", "lora": {"rank": 8, "excludeModules": [
             "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}}),
         "ppo-job.model.lora.excludeModules",
         value='["q_proj","k_proj","v_proj","o_proj","gate_proj","up_proj","down_proj"]'),
    # LoRA choices with the rank at 0 (no LoRA) would be ignored; so would the pool's settings without a pool.
    *[Case(f"lora-{name}-without-a-rank", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", model={"path": "/data/m", "lora": {key: value}}),
           f"ppo-job.model.lora.{key}", value=shown, mentions=["ppo-job.model.lora.rank"])
      for name, key, value, shown in [("target-modules", "targetModules", ["q_proj"], '["q_proj"]'),
                                      ("excluded-modules", "excludeModules", ["o_proj"], '["o_proj"]'),
                                      ("layered-summon", "layeredSummon", True, "true")]],
    *[Case(f"rollout-pool-{name}-without-a-pool", values, field, mentions=["global.rolloutPool.enabled=true"])
      for name, values, field in [
          ("node-selector", ray(rolloutPool=OWN_NODES), "raycluster.rolloutPool.nodeSelector"),
          ("env", ray(rolloutPool={"env": [{"name": "A_FLAG", "value": "1"}]}), "raycluster.rolloutPool.env"),
          ("gpus-per-node", {"global": {"rolloutPool": {"perNode": 2}}}, "global.rolloutPool.perNode"),
          # every key of the pool's values is checked, not a list of them kept by hand
          ("gpu-shape", ray(rolloutPool={"gpuShape": {
              "name": "h20-96g-x8", "gpuModel": "NVIDIA H20", "gpuMemoryGiB": 96, "gpus": 8,
              "allocatable": {"cpu": "180", "memory": "1800Gi"}}}), "raycluster.rolloutPool.gpuShape")]],
    # veRL 0.4.1 gives the adapters to vLLM only, passing the rank on as vLLM 0.8's max_lora_rank (one of its list).
    Case("lora-with-sglang-on-verl-0-4",
         job(rollout={"name": "sglang"}, model={"path": "/data/m", "lora": {"rank": 8}}),
         "ppo-job.rollout.name", mentions=["verlVersion=0.9.1", "rollout.name=vllm"]),
    *[Case(f"lora-rank-{rank}-on-verl-0-4-vllm", job(model={"path": "/data/m", "lora": {"rank": rank}}),
           "ppo-job.model.lora.rank", mentions=[f"rank={fix}"]) for rank, fix in [(4, 8), (24, 32), (500, 512)]],
    # veRL 0.9.1's FSDP1 engine syncs an empty adapter to vLLM: with LoRA the chart sets the actor's engine.
    Case("lora-actor-strategy-by-hand-on-verl-0-9",
         {"global": {"image": image_values("0.9.1")}} | job(verlVersion="0.9.1", model={"path": "/data/m", "lora": {
             "rank": 8}}, extraArgs=["actor_rollout_ref.actor.strategy=fsdp"]),
         "ppo-job.extraArgs[0]", value="actor_rollout_ref.actor.strategy=fsdp", mentions=["fsdp2"]),
    # LoRA's keys are the chart's even while LoRA is off: set by hand they would skip the checks above.
    *[Case(f"extra-arg-lora-{name}",
           {"global": {"image": image_values(version)}} | job(verlVersion=version, extraArgs=[arg]),
           "ppo-job.extraArgs[0]", value=arg)
      for name, version, arg in [("rank", "0.4.1", "actor_rollout_ref.model.lora_rank=8"),
                                 ("target-modules", "0.4.1", "actor_rollout_ref.model.target_modules=[q_proj]"),
                                 ("critic-adapter", "0.9.1", "critic.model.lora_adapter_path=/data/a"),
                                 ("layered-summon", "0.9.1", "actor_rollout_ref.rollout.layered_summon=true")]],
    # The image table knows an image by Docker Hub's full name too (docker.io/verlai/verl is verlai/verl).
    Case("verl-0.4.1-on-the-node-types-image-by-its-full-name",
         {"global": {"image": {**image_values("0.9.1"),
                               "repository": "docker.io/" + image_values("0.9.1")["repository"]}}}
         | job(verlVersion="0.4.1"), "ppo-job.verlVersion", mentions=["verlVersion=0.9.1"]),
    # Image references: the repository's path is lower case (the kubelet refuses InvalidImageName otherwise).
    *[Case(f"image-repository-{name}", {"global": {"image": {"repository": repository}}}, "global.image.repository",
           layer="schema")
      for name, repository in [("upper-case", "VERLAI/VERL"), ("upper-case-path", "registry.example.com/Team/verl"),
                               ("upper-case-without-a-registry", "Verlai/verl")]],
    # The third adversary round: an engine the chart's FSDP config (ppo_trainer) lacks fails as the workers start
    # (0.9.1 reads actor.megatron, which that config has not; 0.3 and 0.4 raise NotImplementedError or assert).
    *[Case(f"extra-arg-strategy-{name}",
           {"global": {"image": image_values(version)}} | job(verlVersion=version, extraArgs=[arg]),
           "ppo-job.extraArgs[0]", value=arg, mentions=[fix])
      for name, version, arg, fix in [
          ("actor-megatron", "0.9.1", "actor_rollout_ref.actor.strategy=megatron", "actor.strategy=fsdp2"),
          ("critic-quoted-megatron", "0.9.1", "critic.strategy='megatron'", "critic.strategy=fsdp2"),
          ("ref-veomni", "0.9.1", "actor_rollout_ref.ref.strategy=veomni", "ref.strategy=fsdp2"),
          ("critic-empty", "0.9.1", "critic.strategy=", "critic.strategy=fsdp2"),
          ("fsdp2-on-verl-0-3", "0.3.0.post1", "critic.strategy=fsdp2", "critic.strategy=fsdp")]],
    # veRL 0.9's trainer reads the Megatron engine's nested LoRA rank as LoRA on, on FSDP workers without adapters.
    *[Case(f"extra-arg-megatron-lora-{name}",
           {"global": {"image": image_values("0.9.1")}} | job(verlVersion="0.9.1", extraArgs=[arg]),
           "ppo-job.extraArgs[0]", value=arg, mentions=[fix])
      for name, arg, fix in [("rank", "actor_rollout_ref.model.lora.rank=8", "ppo-job.model.lora.rank="),
                             ("block", "actor_rollout_ref.model.lora={rank:8}", "ppo-job.model.lora.rank="),
                             ("critic-adapter", "critic.model.lora.adapter_path=/data/a",
                              "ppo-job.critic.lora.rank=")]],
    # The fourth adversary round. A section set at once: Hydra merges a {...} value into it (and puts any other value in
    # its place) over keys the chart renders or its rules read, each rule then blind to it.
    *[Case(f"extra-arg-section-{name}",
           {"global": {"image": image_values("0.9.1")}} | job(verlVersion="0.9.1", extraArgs=[arg], model={
               "path": "/data/models/Qwen2.5-7B", "lora": {"rank": 32}}),
           "ppo-job.extraArgs[0]", value=arg, mentions=[named])
      for name, arg, named in [
          ("lora-actor-back-to-fsdp1", "actor_rollout_ref.actor={strategy:fsdp}", "actor_rollout_ref.actor.strategy="),
          ("lora-rank", "actor_rollout_ref.model={use_shm: true, lora_rank: 8}", "actor_rollout_ref.model.lora_rank"),
          ("gpu-total", "trainer={nnodes: 3}", "trainer.nnodes"),
          ("legacy-trainer", "trainer={use_v1: false}", "trainer.use_v1"),
          ("model-replaced", "actor_rollout_ref.model=null", "actor_rollout_ref.model.<key>=")]],
    # A whole number past what Helm's float64 turns into an int: it rendered -9223372036854775808 into veRL's command.
    *[Case(f"{name}-past-int32", job(**values), field, layer="schema")
      for name, values, field in [
          ("lora-alpha", {"model": {"path": "/data/m", "lora": {"rank": 8, "alpha": 10**20}}},
           "ppo-job.model.lora.alpha"),
          ("total-epochs", {"trainer": {"totalEpochs": 10**20}}, "ppo-job.trainer.totalEpochs"),
          ("save-freq", {"trainer": {"saveFreq": 2**31}}, "ppo-job.trainer.saveFreq")]],
]


@dataclass
class Accepted:
    id: str
    values: dict
    release: str = "verl-ppo"
    namespace: str = "training"


UNUSUAL_PATH = "/data/模型/Qwen=2,5 [it's] {\"x\"} #1 ~me ${oc.env:HOME} a b"
SECRET = {"secretName": "wandb", "key": "api-key"}
# Valid but unusual: each must be accepted by Helm 3, Helm 4 and `generator check`, and render safely
# (test_chart.py, test_verl_config.py check where the values land).
ACCEPTED = [
    Accepted("replay-buffer-off-on-verl-0.3", {"global": {"image": image_values("0.3.0.post1")}} | job(
        verlVersion="0.3.0.post1", trainer={"rolloutPollSeconds": None})),
    Accepted("final-output-only-on-verl-0.9.1", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", rollout={"finalOutputOnly": True}, trainer={"rolloutPollSeconds": None})),
    # Code the user put on the shared volume goes on PYTHONPATH from there (the real-node tier's stand-in does).
    Accepted("python-path-on-the-volume", ray(pythonPath="/data/code:/workspace/verl")),
    # Issue 36: a rollout pool of one node like the training nodes', and one on a node type of its own.
    Accepted("rollout-pool-like-the-training-nodes", pool()),
    Accepted("rollout-pool-of-its-own-node-type", pool(
        {**OWN_NODES, "tolerations": [], "resources": {"cpu": "8", "memory": "32Gi"}, "rdma": {"enabled": True},
         "nccl": {"NCCL_IB_HCA": "mlx5"}, "rayStartParams": {"num-cpus": "8"}}, perNode=4, nodes=2)),
    # A family the chart does not know is not checked (GPT-2's fused c_attn); an adapter path with a space and '='.
    Accepted("lora-modules-of-an-unknown-family",
             job(model={"path": "/data/gpt2-custom", "lora": {"rank": 16, "targetModules": ["c_attn", "c_proj"]}})),
    Accepted("lora-adapter-path-with-space", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", algorithm={"name": "grpo"}, model={
        "path": "/data/Qwen2.5-7B", "lora": {"rank": 32, "adapterPath": "/data/adapters/run a=1/lora_adapter",
                                             "excludeModules": ["down_proj"], "layeredSummon": True}})),
    Accepted("gcs-fault-tolerance-rediss-ipv6", ray(gcsFaultTolerance={
        "enabled": True, "redisAddress": "rediss://[fd00::6379]:6380", "externalStorageNamespace": "team-a.run_1"})),
    Accepted("ray-start-value-with-shell-syntax", ray(head={"rayStartParams": {"num-cpus": "8; touch /tmp/x"}})),
    Accepted("ray-start-value-with-quote", ray(worker={"rayStartParams": {"node-name": "it's"}})),
    Accepted("ray-start-value-large-number", ray(head={"rayStartParams": {"object-store-memory": 100000000000}})),
    Accepted("ray-start-switch", ray(head={"rayStartParams": {"disable-usage-stats": True}})),
    Accepted("nccl-large-number", ray(nccl={"NCCL_BUFFSIZE": 8388608})),
    Accepted("memory-as-plain-bytes", ray(head={"resources": {"memory": 107374182400}})),
    Accepted("memory-exponent-string", ray(worker={"resources": {"memory": "107e9"}})),
    Accepted("cpu-as-number-and-millis", ray(head={"resources": {"cpu": 30}, "trainsOnHead": True},
                                             worker={"resources": {"cpu": "29500m"}})),
    Accepted("model-path-every-hydra-character", job(model={"path": UNUSUAL_PATH})),
    Accepted("model-path-uri", job(model={"path": "hdfs://namenode:8020/models/qwen"})),
    Accepted("data-path-non-ascii",
             job(data={"trainFiles": "/data/数据/train.parquet", "valFiles": "/data/数据/test.parquet"})),
    *[Accepted(f"experiment-named-{name}", job(trainer={"experimentName": name})) for name in ("null", "true", "nan",
                                                                                               "2024", "...")],
    Accepted("project-hidden-name", job(trainer={"projectName": ".runs"})),
    Accepted("checkpoint-dir-normalises-onto-the-volume", job(trainer={"checkpointDir": "/data/./ckpt//run/"})),
    # A {...} value that sets no key the chart renders or reads: Hydra merges it into the section.
    Accepted("extra-arg-dict-of-keys-the-chart-leaves", job(extraArgs=[
        "trainer={val_before_train: false}"])),
    Accepted("output-dirs-on-the-volume", job(extraArgs=["trainer.rollout_data_dir=/data/rollouts",
                                                         "trainer.validation_data_dir=null"])),
    Accepted("harmless-names-that-mention-tokens", ray(env=[{"name": "TOKENIZERS_PARALLELISM", "value": "false"}]) |
             job(runtimeEnv={"env": {"TOKENIZERS_PARALLELISM": "false", "NCCL_DEBUG": "INFO"}})),
    # Each credential once, from a Secret (the Hugging Face token through env: credentials.huggingface would set it
    # too).
    Accepted("credentials-from-secrets",
             ray(credentials={"wandb": SECRET},
                 extraSecretEnv={"MLFLOW_TRACKING_PASSWORD": {"secretName": "mlflow", "key": "pw"}},
                 env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}])),
    Accepted("wandb-logger-with-its-secret",
             job(trainer={"logger": ["console", "wandb"]}) | ray(credentials={"wandb": SECRET})),
    Accepted("ingress-ipv6-allowlist", ray(ingress={"enabled": True, "host": "*.example.com",
                                                    "accessControl": {"sourceRanges": ["2001:db8::/32", "10.0.0.0/8"]}},
                                           networkPolicy={"dashboardFromAnywhere": True})),
    Accepted("exposed-services-with-opt-in",
             ray(head={"serviceType": "LoadBalancer", "allowUnauthenticatedService": True}) |
             {"global": {"tensorboard": {"enabled": True, "serviceType": "NodePort",
                                         "allowUnauthenticatedService": True}}}),
    Accepted("large-ids-and-timeouts", job(prepare={"enabled": True, "runAsUser": 1000680000, "runAsGroup": 1000680000},
                                           submitter={"waitTimeoutSeconds": 1000000})),
    Accepted("toleration-without-key", ray(tolerations=[{"operator": "Exists"}])),
    Accepted("scrape-timeout-in-milliseconds",
             {"observability": {"podMonitor": {"interval": "1m", "scrapeTimeout": "59500ms"}}}),
    Accepted("release-name-that-starts-like-a-boolean", {}, release="yes-run"),
    # Issue 28: unusual but valid.
    Accepted("dataset-id-with-slash-and-dot",
             job(prepare={"enabled": True, "dataset": {"id": "my-org.lab/gsm8k.v2_clean"},
                          "model": {"id": "Qwen/Qwen2.5-0.5B-Instruct"}})),
    Accepted("reward-path-with-space",
             job(reward={"functionPath": "/data/my rewards/score it.py", "functionName": "score"})),
    Accepted("grpo-with-two-responses", job(algorithm={"name": "grpo"}, rollout={"responsesPerPrompt": 2})),
    Accepted("rayjob-ttl-zero", {"global": {"mode": "RayJob"}, **job(rayJob={"ttlSecondsAfterFinished": 0})}),
    Accepted("rayjob-deadlines-at-int32",
             {"global": {"mode": "RayJob"}, **job(rayJob={"activeDeadlineSeconds": 2147483647})}),
    Accepted("modelscope-domain-and-hf-url",
             job(prepare={"enabled": True, "source": "modelscope", "endpoint": "modelscope.cn:443",
                          "dataset": {"id": "modelscope/gsm8k"}})),
    Accepted("hf-mirror-url-with-path",
             job(prepare={"enabled": True, "endpoint": "https://mirror.example.com:8443/hf"})),
    Accepted("prepare-local-under-the-volume",
             job(prepare={"enabled": True, "source": "local", "dataset": {"localPath": "/data/offline/gsm8k"},
                          "model": {"localPath": "/data/offline/./model"}})),
    Accepted("dashboard-peers-named", ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}},
        {"ipBlock": {"cidr": "10.0.0.0/16"}}],
        "metricsFrom": [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]})),
    Accepted("dashboard-every-namespace-with-opt-in", ray(ingress=NGINX_LOCKED, networkPolicy={
        "dashboardFrom": [{"namespaceSelector": {}}], "dashboardFromAnywhere": True})),
    Accepted("labels-and-queue-as-the-api-takes-them",
             ray(queue={"volcano": "team-a_GPU.1"}, nodeSelector={"node.kubernetes.io/pool": ""},
                 head={"labels": {"example.com/cost-center": "R-and-D.42"}}) |
             {"global": {"commonLabels": {"team": "research"}}}),
    Accepted("dashboard-peers-that-narrow", peers(
        dashboardFrom=[{"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]}},
                       {"namespaceSelector": {"matchExpressions": [
                           {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ingress-nginx"]}]}},
                       {"ipBlock": {"cidr": "0.0.0.0/1"}},
                       {"ipBlock": {"cidr": "128.0.0.0/2", "except": ["128.1.0.0/16"]}},
                       {"ipBlock": {"cidr": "2001:db8::/32"}}],
        metricsFrom=[{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
                      "namespaceSelector": {}}])),
    Accepted("ray-token-with-a-load-balancer-head", token_on({"head": {"serviceType": "LoadBalancer"}})),
    Accepted("ray-token-with-tensorboard-behind-source-ranges",
             token_on({"ingress": {"enabled": True, "accessControl": {"sourceRanges": ["10.0.0.0/8"]}},
                       "networkPolicy": {"dashboardFromAnywhere": True}},
                      **{"global": {"tensorboard": {"enabled": True, "ingressPath": "/tensorboard"}}})),
    Accepted("ray-token-with-tensorboard-opted-in",
             token_on({"ingress": {"enabled": True}, "networkPolicy": {"dashboardFromAnywhere": True}},
                      **{"global": {"tensorboard": {"enabled": True, "ingressPath": "/tensorboard",
                                                    "ingressAllowUnauthenticated": True}}})),
    Accepted("ray-token-variables-without-the-token", ray(env=[{"name": "RAY_AUTH_MODE", "value": "disabled"}])),
    Accepted("kuberay-operator-namespace-of-digits", {"global": {"mode": "RayJob"}, "raycluster": {
        "networkPolicy": {"kubeRayOperator": {"namespace": "1234", "podLabels": {"example.com/app": "true"}}}}}),
    Accepted("env-that-mentions-the-charts-without-replacing", ray(env=[{"name": "PYTHONPATH_EXTRA", "value": "/code"},
                                                                       {"name": "HF_HUB_OFFLINE", "value": "1"}])),
    # Issue 37: valid and unusual, and the false refusals of the newest surfaces.
    Accepted("ray-version-without-patch-with-token", {"global": {"rayAuth": {"tokenSecret": "ray-token"},
                                                                 "image": OWN_IMAGE},
                                                      "raycluster": {"rayVersion": "2.60"}}),
    Accepted("ray-version-with-v-with-token", {"global": {"rayAuth": {"tokenSecret": "ray-token"}, "image": OWN_IMAGE},
                                               "raycluster": {"rayVersion": "v2.60.0"}}),
    Accepted("kueue-elastic-rayjob",
             {"global": {"mode": "RayJob"}, "raycluster": {"queue": {"kueue": "team-a", "elastic": True},
                                                           "worker": {"autoscaling": {"enabled": True, "minReplicas": 1,
                                                                                      "maxReplicas": 2}}}}),
    Accepted("credential-look-alikes", ray(env=[{"name": f"SETTING_{index}", "value": value}
                                                for index, value in enumerate(CREDENTIAL_SHAPES["lookAlikes"])])),
    Accepted("extra-args-hydra-reads-as-one-value", job(extraArgs=[
        "data.prompt_key='a,b c'", 'data.reward_fn_key="data source"', "actor_rollout_ref.actor.clip_ratio_high=0.3",
        "actor_rollout_ref.rollout.val_kwargs.top_p=0.95", "trainer.val_before_train=False",
        "trainer.rollout_data_dir=null",
        "data.image_key=${oc.env:IMAGE_KEY,images}", "actor_rollout_ref.rollout.enforce_eager=True"])),
    Accepted("own-image-with-any-verl", {"global": {"image": OWN_IMAGE}} | job(verlVersion="0.9.1")),
    Accepted("image-from-a-registry-with-a-port", {"global": {"image": {"repository": "registry.local:5000/team/verl",
                                                                        "tag": "v1"}}}),
    Accepted("mount-path-of-its-own", {"global": {"storage": {"mountPath": "/mnt/shared-data"}}} | job(
        data={"trainFiles": "/mnt/shared-data/train.parquet", "valFiles": "/mnt/shared-data/test.parquet"},
        model={"path": "/mnt/shared-data/qwen"})),
    Accepted("storage-size-in-tebibytes", {"storage": {"size": "1.5Ti"}}),
    Accepted("namespace-with-digits", {}, namespace="team-42"),
    Accepted("podmonitor-any-namespace", {"observability": {"podMonitor": {"namespaceSelector": {"any": True}}}}),
    Accepted("podmonitor-own-namespace-and-another",
             {"observability": {"podMonitor": {"namespaceSelector": {"matchNames": ["training", "ray"]}}}}),
    Accepted("critic-model-for-ppo", job(critic={"modelPath": "/data/critic-model"})),
    Accepted("operator-in-rayjob-mode", {"global": {"mode": "RayJob"}} | ray(
        networkPolicy={"kubeRayOperator": {"namespace": "ray-system", "podLabels": {"app": "kuberay"}}})),
    Accepted("kl-coef-where-read", job(algorithm={"name": "rloo", "klCoef": 0.01})),
    Accepted("env-names-distinct-across-lists", ray(env=[{"name": "A_FLAG", "value": "1"}],
                                                    head={"env": [{"name": "B_FLAG", "value": "1"}]},
                                                    worker={"env": [{"name": "B_FLAG", "value": "2"}]})),
    Accepted("rollout-metrics-read", ROLLOUT_091),
    # The adversary's round: valid and unusual on the newest surfaces.
    Accepted("rollout-pool-env-and-labels-of-its-own", pool(OWN_NODES | {
        "env": [{"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"}], "labels": {"example.com/pool": "rollout"},
        "annotations": {"example.com/owner": "team-a"}, "nccl": {"NCCL_IB_HCA": "mlx5"}})),
    # veRL 0.9.1 rounds a rank up to the vLLM rank that holds it (get_vllm_max_lora_rank).
    Accepted("lora-rank-between-vllms-ranks", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", model={"path": "/data/Qwen2.5-7B", "lora": {"rank": 3, "alpha": 100000000}})),
    Accepted("lora-with-sglang-on-verl-0-9", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", rollout={"name": "sglang"}, model={"path": "/data/m", "lora": {"rank": 24}})),
    Accepted("lora-with-the-hf-rollout-on-verl-0-4", job(rollout={"name": "hf"}, model={"path": "/data/m",
                                                                                      "lora": {"rank": 4}})),
    Accepted("lora-excludes-some-targets", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", model={"path": "/data/Qwen2.5-7B", "lora": {"rank": 8, "excludeModules": ["o_proj"]}})),
    Accepted("image-registry-host-in-upper-case", {"global": {"image": {"repository": "Registry.Example.com/team/verl",
                                                                        "tag": "v1"}}}),
    Accepted("replay-buffer-polled-at-its-edges", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", trainer={"rolloutPollSeconds": 0.01})),
    Accepted("fsdp-engines-in-extra-args", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", extraArgs=["actor_rollout_ref.actor.strategy=fsdp2", "critic.strategy='fsdp'",
                                        "actor_rollout_ref.ref.strategy=${actor_rollout_ref.actor.strategy}"])),
    # The legacy trainer with the replay buffer's default interval or none (nothing reads either); plain true switches.
    Accepted("legacy-trainer-with-the-default-poll", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", extraArgs=["trainer.use_v1=False"])),
    Accepted("legacy-trainer-without-the-replay-buffer", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", trainer={"rolloutPollSeconds": None}, extraArgs=["trainer.use_v1=false"])),
    Accepted("switches-true-in-any-case", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", extraArgs=["trainer.use_v1=TRUE", "actor_rollout_ref.hybrid_engine=True"])),
    Accepted("fsdp-lora-merged-for-the-rollout", {"global": {"image": image_values("0.9.1")}} | job(
        verlVersion="0.9.1", model={"path": "/data/m", "lora": {"rank": 8}},
        extraArgs=["actor_rollout_ref.model.lora.merge=True"])),
]


# The "nothing breaks out" cases that the schema stops (the others, the cross-field rules).
SCHEMA_CASES = {
    "ray-start-key-newline", "ray-start-key-space", "ray-start-key-semicolon", "ray-start-key-upper-case",
    "ray-start-key-leading-dashes", "ray-start-key-dollar", "ray-start-worker-key-quote", "ray-start-value-a-map",
    "token-secret-name-newline", "token-secret-key-slash", "tos-secret-name-upper-case",
    "tos-secret-namespace-invalid", "image-pull-secret-with-space", "existing-claim-invalid-name",
    "storage-class-with-space", "priority-class-newline", "basic-auth-secret-invalid", "dashboard-label-with-space",
    "dashboard-folder-annotation-colon", "extra-secret-env-name-dash", "extra-secret-env-without-key",
    "wandb-secret-invalid-name", "runtime-env-name-with-space", "model-path-relative", "model-path-home-tilde",
    "model-path-backslash", "model-path-newline", "critic-model-relative", "train-files-relative", "val-files-tab",
    "checkpoint-dir-backslash", "experiment-named-dot-dot", "experiment-named-dot", "experiment-with-slash",
    "project-named-dot-dot", "source-range-prefix-33", "source-range-octet-256", "source-range-host-name",
    "source-range-ipv6-prefix-129", "source-range-three-octets", "ingress-host-with-scheme", "ingress-host-with-port",
    "ingress-host-with-path", "ingress-host-upper-case", "ingress-path-with-space", "cpu-negative", "cpu-zero-string",
    "cpu-zero-number", "cpu-zero-millis", "cpu-negative-string", "memory-negative", "memory-with-space",
    "image-tag-with-space", "image-tag-with-newline", "image-repository-with-space", "submitter-image-tag-with-space",
    "toleration-operator-exist", "toleration-effect-unknown", "toleration-unknown-field",
    "scrape-interval-with-space", "submitter-cpu-not-a-quantity", "submitter-resources-misspelled",
    "prepare-memory-not-a-quantity", "tensorboard-cpu-zero", "storage-size-with-space", "prepare-endpoint-with-space",
    "mount-path-with-newline", "mount-path-with-space", "rdma-count-zero", "gcs-redis-address-with-credentials",
    "gcs-redis-address-without-port", "gcs-redis-password-secret-upper-case",
    "rayjob-ttl-past-int32", "rayjob-deadline-past-int32", "submitter-backoff-past-int32", "prepare-backoff-past-int32",
    "autoscaling-max-past-int32", "volcano-queue-with-space", "volcano-queue-too-long", "common-label-value-with-colon",
    "head-label-key-with-space", "node-selector-value-with-slash", "podmonitor-label-value-with-space",
    "network-policy-empty-dashboard-peer", "network-policy-empty-metrics-peer", "dashboard-url-port-zero",
    "dashboard-url-port-past-65535", "prepare-endpoint-with-credentials", "prepare-endpoint-port-past-65535",
    "prepare-dataset-id-option", "prepare-model-id-option",
    "dashboard-peer-misspelled-selector-field", "metrics-peer-misspelled-pod-selector-field",
    "dashboard-peer-label-value-with-space", "dashboard-peer-label-key-too-long",
    "dashboard-peer-expression-unknown-operator",
    "dashboard-peer-expression-key-with-space", "dashboard-peer-cidr-without-prefix", "dashboard-peer-cidr-host-name",
    "metrics-peer-except-not-a-cidr", "kuberay-operator-namespace-a-number", "kuberay-operator-namespace-upper-case",
    "kuberay-operator-label-name-too-long",
    "lora-rank-past-vllm", "lora-target-modules-a-word", "lora-module-name-with-space", "critic-lora-layered-summon",
}
CASES = [replace(case, layer="schema") if case.id in SCHEMA_CASES else case for case in CASES]


def token(text: str) -> str:
    """`text` as a whole token: not part of a longer path, key or word."""
    return rf"(?<![\w./\[-]){re.escape(text)}(?![\w\[/-])"


# An element of a list field, as the messages name it (field[0]).
INDEX = r"(?:\[\d+\])?"
# The README pointer generator check once gave schema errors: not a fix of its own.
README_POINTER = "see the parameter's description"


def field_named(case: Case) -> str:
    """The field as a whole token followed by `=`: with its value and `: ` where the case knows the value
    (the rulebook's `  - field=value: ` and generator check's `field=value: `)."""
    field, value = case.field, case.printed_value()
    start = r"(?<![\w./\[-])"
    if value is not None:
        return start + re.escape(f"{field}={value}") + ": "
    return start + re.escape(field) + INDEX + "="


def named(output: str, case: Case) -> bool:
    """The field (a dotted path) as a whole token, with its value where the message prints one, and each
    mention as a word."""
    found = re.search(field_named(case), output)
    return bool(found) and all(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", output) for word in case.mentions)


def fixed(output: str, case: Case) -> bool:
    """The line naming the field says how to fix it: `Fix: ` and a sentence of its own."""
    lines = [line for line in output.splitlines() if re.search(field_named(case), line)]
    fixes = [match.group(1).strip() for line in lines for match in [re.search(r"\. Fix: (.*)$", line)] if match]
    return any(len(fix) > 10 and README_POINTER not in fix for fix in fixes)


# How Helm starts its refusal of values outside a chart's values.schema.json (before any template renders).
SCHEMA_REFUSAL = "values don't meet the specifications of the schema(s)"


def stopped_by(output: str, case: Case) -> bool:
    """Helm stopped it where the case says: the cross-field rules list it, or the values schema refused it."""
    if case.layer == "rule":
        return "value(s) to fix" in output and re.search(rf"^  - {token(case.field)}=", output, re.M) is not None
    return SCHEMA_REFUSAL in output and "value(s) to fix" not in output


def field_parts(field: str) -> list[str | int]:
    """The keys and list indexes of a dotted field (its last key may be JSON-quoted, as the messages print one)."""
    quoted = re.search(r'\.(".*")$', field)
    head = field[: quoted.start()] if quoted else field
    parts: list[str | int] = []
    for part in head.split("."):
        name, *indexes = re.split(r"\[(\d+)\]", part)
        parts += [name, *(int(index) for index in indexes if index)]
    return parts + ([json.loads(quoted.group(1))] if quoted else [])


def pointer(parts: list[str | int]) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def helm_quoted(key: str) -> str:
    """A key as Helm's schema library quotes it in a message: 'it\\'s', 'a\\nb'."""
    return "'" + json.dumps(key, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'") + "'"


def helm_names_path(output: str, field: str) -> bool:
    """Helm's schema refusal names the field's path: its JSON pointer, or its map's with the key (an unknown
    key, a missing one)."""
    parts = field_parts(field)
    if re.search(rf"at '{re.escape(pointer(parts))}(/\d+)?'", output):  # a list, or an item of it
        return True
    parent, key = pointer(parts[:-1]), helm_quoted(str(parts[-1]))
    extra_or_missing = rf"(additional propert(y|ies) .*{re.escape(key)}|missing propert(y|ies) .*{re.escape(key)})"
    if re.search(rf"at '{re.escape(parent)}': {extra_or_missing}", output):
        return True
    # A key nulled in a component's section (Helm drops it there, not in the umbrella's copy) is missing only for the
    # component's schema, which names it under the component's heading, relative to its section.
    component = re.search(rf"^{re.escape(str(parts[0]))}:\n((?:[- ] .*\n?)*)", output, re.M)
    missing = rf"at '{re.escape(pointer(parts[1:-1]))}': missing propert(y|ies) .*{re.escape(key)}"
    return bool(component) and re.search(missing, component.group(1)) is not None


def values_file(tmp_path: Path, case: Case) -> Path:
    path = tmp_path / f"{case.id}.yaml"
    path.write_text(yaml.safe_dump(case.values))
    return path


def test_at_least_120_distinct_bad_inputs():
    assert len({case.id for case in CASES}) == len(CASES) >= 120


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_helm_template_rejects_and_names_the_field(helm, tmp_path, case):
    result = helm_cli.template(helm, "-f", str(values_file(tmp_path, case)), release=case.release,
                               namespace=case.namespace)
    assert result.returncode != 0, f"{case.id} rendered:\n{result.stdout[:500]}"
    assert stopped_by(result.output, case), f"{case.id} not stopped by the {case.layer}: {result.output}"
    if case.layer == "schema":
        assert helm_names_path(result.output, case.field), result.output
    else:
        assert named(result.output, case), result.output
        assert fixed(result.stderr, case), f"{case.id}: no fix sentence on the field's line: {result.stderr}"


# Rules the schema guards too (defence for a schema that drifts): reached past the schema (Helm's
# --skip-schema-validation), each must still name the field and the value.
BEHIND_THE_SCHEMA = [
    Case("relative-checkpoint-dir-past-the-schema", job(trainer={"checkpointDir": "checkpoints/run"}),
         "ppo-job.trainer.checkpointDir"),
    Case("unknown-verl-version-past-the-schema", job(verlVersion="0.5.0"), "ppo-job.verlVersion"),
    Case("lora-adapter-relative-past-the-schema",
         job(verlVersion="0.9.1", model={"path": "/data/m", "lora": {"rank": 8, "adapterPath": "adapters/a"}}),
         "ppo-job.model.lora.adapterPath"),
    Case("fullname-not-dns-past-the-schema", {"global": {"fullnameOverride": "Verl_PPO"}}, "global.fullnameOverride",
         mentions=["DNS-1035"]),
    Case("fullname-too-long-past-the-schema", {"global": {"fullnameOverride": "a" * 46}}, "global.fullnameOverride",
         mentions=["46 characters"]),
    Case("empty-dashboard-peer-past-the-schema", ray(ingress=NGINX_LOCKED, networkPolicy={"dashboardFrom": [{}]}),
         "raycluster.networkPolicy.dashboardFrom[0]", value="{}"),
    Case("empty-metrics-peer-past-the-schema", ray(networkPolicy={"metricsFrom": [{}]}),
         "raycluster.networkPolicy.metricsFrom[0]", value="{}"),
]


@pytest.mark.parametrize("case", BEHIND_THE_SCHEMA, ids=[case.id for case in BEHIND_THE_SCHEMA])
def test_rules_behind_the_schema_still_fire(helm, tmp_path, case):
    result = helm_cli.template(helm, "-f", str(values_file(tmp_path, case)), "--skip-schema-validation")
    assert result.returncode != 0 and stopped_by(result.output, case), result.output
    assert named(result.output, case), result.output


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_generator_check_rejects_and_names_the_field(tmp_path, capsys, case):
    code = generator_main(["check", str(values_file(tmp_path, case)), "--release-name", case.release,
                           "--namespace", case.namespace])
    output = capsys.readouterr().out
    assert code == 1, output
    assert named(output, case), output
    assert fixed(output, case), f"{case.id}: no fix sentence on the field's line: {output}"


def test_at_least_25_valid_but_unusual_inputs():
    assert len({case.id for case in ACCEPTED}) == len(ACCEPTED) >= 25


@pytest.mark.parametrize("case", ACCEPTED, ids=[case.id for case in ACCEPTED])
def test_helm_accepts_valid_but_unusual_input(helm, tmp_path, case):
    result = helm_cli.template(helm, "-f", str(values_file(tmp_path, case)), release=case.release,
                               namespace=case.namespace)
    assert result.returncode == 0, result.output


@pytest.mark.parametrize("case", ACCEPTED, ids=[case.id for case in ACCEPTED])
def test_generator_check_accepts_valid_but_unusual_input(tmp_path, capsys, case):
    code = generator_main(["check", str(values_file(tmp_path, case)), "--release-name", case.release,
                           "--namespace", case.namespace])
    assert code == 0, capsys.readouterr().out


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
    (["--set", "global.storage.mountPath=null"], ["global.storage.mountPath"], "rule"),
]


@pytest.mark.parametrize("args,fields,layer", SET_FORMS,
                         ids=["comma-pair", "list-index", "escaped-dot", "set-string", "set-json", "null-deletes"])
def test_check_and_helm_agree_on_set_forms(helm, capsys, args, fields, layer):
    result = helm_cli.template(helm, *args)
    code = generator_main(["check", *args])
    output = capsys.readouterr().out
    assert (result.returncode == 0) == (code == 0) == (not fields), (result.output, output)
    for path in fields:
        case = Case(path, {}, path, layer=layer)
        helm_named = helm_names_path(result.output, path) if layer == "schema" else named(result.output, case)
        assert stopped_by(result.output, case) and helm_named and named(output, case), (result.output, output)


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
    "one-sample-per-gpu": ["--set", "ppo-job.actor.ppoMiniBatchSize=4",
                           "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=1",
                           "--set", "ppo-job.critic.ppoMicroBatchSizePerGpu=1"],
    "mini-batch-equals-batch": ["--set", "ppo-job.actor.ppoMiniBatchSize=256",
                                "--set", "ppo-job.data.trainBatchSize=256"],
    "fullname-of-45": ["--set", "global.fullnameOverride=" + "a" * 45],
    "tensor-parallel-of-a-whole-node": ["--set", "ppo-job.rollout.tensorModelParallelSize=2"],
    "autoscaling-exactly-the-workers": ["--set", "raycluster.worker.autoscaling.enabled=true",
                                        "--set", "raycluster.worker.autoscaling.minReplicas=1",
                                        "--set", "raycluster.worker.autoscaling.maxReplicas=1"],
    "grace-period-of-rays-teardown-and-5-s": ["--set", "raycluster.terminationGracePeriodSeconds=20"],
    "grace-period-of-an-hour": ["--set", "raycluster.terminationGracePeriodSeconds=3600"],
    "cpu-only-head-with-one-worker": ["--set", "raycluster.head.trainsOnHead=false", "--set", "global.gpu.nodes=1"],
    "pods-of-the-whole-allocatable": ["--set", "raycluster.worker.resources.cpu=37500m",
                                      "--set", "raycluster.head.resources.memory=125Gi"],
}


@pytest.mark.parametrize("case", sorted(AT_THE_LIMIT))
def test_values_at_a_rules_limit_pass(helm, capsys, case):
    result = helm_cli.template(helm, *AT_THE_LIMIT[case])
    assert result.returncode == 0, result.output
    assert generator_main(["check", *AT_THE_LIMIT[case]]) == 0, capsys.readouterr().out


# Constraints of every kind broken at once: generator check names each field with its fix, and Helm's schema
# refusal names the path of each of them.
EVERY_KIND_BROKEN = {
    "global": {"gpu": {"perNode": 17, "nodes": "two"}, "imagePullSecrets": ["ok", "Not OK"],
               "fullnameOverride": "x" * 50},
    "ppo-job": {"data": {"maxPromptLength": 8}, "actor": {"lr": 0, "ppoMiniBatchSize": 1.5},
                "trainer": {"logger": [], "projectName": "..", "checkpointDir": "relative"},
                "rollout": {"gpuMemoryUtilization": 0.99, "tensorModelParallelSize": 3},
                "model": {"path": "/data/x\ny"},
                "extraArgs": ["ab"], "runtimeEnv": {"env": {"BAD KEY": "1", "OK": {"a": 1}}}, "verlVersion": 0.4,
                "rayJob": {"activeDeadlineSeconds": 0}, "algorithm": {"klCoef": -1e-06}, "critic": {"lr": -1e-05}},
    "raycluster": {"head": {"resources": {"cpu": "0m", "memory": "1 Gi"}, "rayStartParams": {"Bad\tKey": 1},
                            "unknownKey": True},
                   "extraSecretEnv": {"A": {"secretName": "s"}}, "tolerations": [{"operator": "Exist", "effect": 5}],
                   "ingress": {"host": "X" * 80}},
    "observability": {"dashboards": {"include": ["default", "default"]}, "podMonitor": {"enabled": "maybe"}},
}


def test_helm_names_the_path_of_every_field_generator_check_names(helm, tmp_path, capsys):
    path = tmp_path / "every-kind.yaml"
    path.write_text(yaml.safe_dump(EVERY_KIND_BROKEN))
    result = helm_cli.template(helm, "-f", str(path))
    assert result.returncode != 0 and SCHEMA_REFUSAL in result.stderr, result.output
    assert generator_main(["check", str(path)]) == 1
    findings = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines()]
    assert len(findings) >= 25 and all(". Fix: " in finding for finding in findings), findings
    fields = [finding.split("=", 1)[0] for finding in findings]
    assert [field for field in fields if not helm_names_path(result.stderr, field)] == [], result.stderr


def test_check_findings_name_the_field_with_its_fix_and_shorten_long_values():
    """A schema finding names the field (top-level keys too) and its fix, and prints a value of more than
    60 characters cut to 57 and `...`."""
    from generator import paths
    from generator.check import check
    from generator.helm import HelmInputs

    def findings(**inputs):
        return [str(finding) for finding in check(paths.CHART, HelmInputs(**inputs)).findings]

    assert findings(set_jsons=("ppo-job.data.trainBatchSize=[1,2]",)) == [
        "ppo-job.data.trainBatchSize=[1,2]: is a list, not a whole number. Fix: write a whole number"]
    (sixty,) = findings(set_strings=("global.fullnameOverride=" + "a" * 60,))
    assert sixty.startswith(f"global.fullnameOverride={'a' * 60}: is longer than 45 characters. Fix: ")
    (sixty_one,) = findings(set_strings=("global.fullnameOverride=" + "a" * 61,))
    assert sixty_one.startswith(f"global.fullnameOverride={'a' * 57}...: ")
    (top,) = findings(sets=("foo=1",))
    assert top.startswith("foo=1: is not a setting here. Fix: ") and "ppo-job" in top
    # A component's suggestions are its settings, not the sections Helm hands it (global, the library's).
    (component,) = findings(sets=("raycluster.foo=1",))
    suggested = component.split("correct its spelling to one of ", 1)[1].split(", ")
    assert "head" in suggested and "global" not in suggested and "verl-ppo-lib" not in suggested, component


def test_check_findings_of_a_helm_error_that_is_no_rule_keep_helms_text():
    from generator.check import Finding, rule_findings

    assert rule_findings("Error: template: x.yaml:3: nil pointer\n") == [
        Finding("(helm template)", "", "Error: template: x.yaml:3: nil pointer", "see Helm's message")]
    assert rule_findings("Error: 1 value(s) to fix\n  - a.b=3: is odd. Fix: --set a.b=4\n") == [
        Finding("a.b", "3", "is odd", "--set a.b=4")]


def test_check_findings_leave_extra_args_of_a_disabled_job_alone(capsys):
    code = generator_main(["check", "--set", "ppo-job.enabled=false",
                           "--set", "ppo-job.extraArgs[0]=trainer.val_before_trian=False"])
    assert code == 0, capsys.readouterr().out
    assert capsys.readouterr().err == "", "a disabled job's extraArgs are not looked at, not even to say why not"


VKE_TOS = ("--set", "storage.tos.bucket=b", "--set", "storage.tos.secretName=tos-credentials")
VKE_INGRESS_FIELDS = ["raycluster.ingress.enabled", "raycluster.networkPolicy.dashboardFrom"]


def test_the_vke_ingress_hears_of_every_missing_piece_at_once(helm, capsys):
    """A new user turning the dashboard Ingress on on VKE: the access control (to enforce on the ALB) and the
    NetworkPolicy's dashboard peers, in one refusal, from Helm and from generator check alike."""
    args = ("-f", "values/platforms/vke.yaml", *VKE_TOS, "--set", "raycluster.ingress.enabled=true")
    result = helm_cli.template(helm, *args)
    assert result.returncode != 0
    assert "2 value(s) to fix" in result.stderr, result.stderr
    assert all(f"  - {field}=" in result.stderr for field in VKE_INGRESS_FIELDS), result.stderr
    assert "ALB" in result.stderr and "enforcedExternally=true" in result.stderr and "ipBlock" in result.stderr
    assert generator_main(["check", "--together", "values/platforms/vke.yaml", *VKE_TOS,
                           "--set", "raycluster.ingress.enabled=true"]) == 1
    reported = [line.split(": ", 1)[1].split("=", 1)[0] for line in capsys.readouterr().out.splitlines()]
    assert sorted(reported) == VKE_INGRESS_FIELDS


def readme_vke_example() -> str:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    return re.search(r"```yaml\n(# dashboard-vke\.yaml.*?)```", readme, re.S).group(1)


def test_the_readmes_vke_ingress_example_passes(helm, tmp_path, capsys):
    path = tmp_path / "dashboard-vke.yaml"
    path.write_text(readme_vke_example())
    args = ("-f", "values/platforms/vke.yaml", *VKE_TOS, "-f", str(path))
    result = helm_cli.template(helm, *args)
    assert result.returncode == 0, result.output
    policy = next(d for d in result.documents() if d["kind"] == "NetworkPolicy")
    assert {"ipBlock": {"cidr": "192.168.16.0/24"}} in policy["spec"]["ingress"][-1]["from"]
    assert generator_main(["check", "--together", "values/platforms/vke.yaml", str(path), *VKE_TOS]) == 0, \
        capsys.readouterr().out
