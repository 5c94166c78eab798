"""`generator check`: a values file against the schema and the rules veRL, KubeRay and the nodes enforce.

The chart enforces the same rules at render time (templates/_preflight.tpl, the ppo-job and
raycluster _validate.tpl); this is the same contract checked before Helm, with Python's error text.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Iterable

import jsonschema
import yaml

from generator import paths, verlconfig
from generator.quantity import cpu_millis, memory_bytes
from generator.schema import values_schema

MAX_FULLNAME = 45
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
OVERRIDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*=")
# Keys whose *_per_gpu twin the chart always sets: veRL accepts only one of the two.
UNSIZED_TWINS = (
    "actor_rollout_ref.actor.ppo_micro_batch_size",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size",
    "actor_rollout_ref.ref.log_prob_micro_batch_size",
    "critic.ppo_micro_batch_size",
)
# Keys the chart always renders from values (charts/verl-ppo/charts/ppo-job/templates/_command.tpl).
ALWAYS_RENDERED_KEYS = frozenset(
    {
        "data.train_files", "data.val_files", "data.train_batch_size", "data.max_prompt_length",
        "data.max_response_length", "actor_rollout_ref.model.path", "actor_rollout_ref.actor.optim.lr",
        "actor_rollout_ref.actor.ppo_mini_batch_size", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        "actor_rollout_ref.rollout.name", "actor_rollout_ref.rollout.n",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        "actor_rollout_ref.rollout.tensor_model_parallel_size", "actor_rollout_ref.rollout.gpu_memory_utilization",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", "critic.optim.lr", "critic.model.path",
        "critic.ppo_micro_batch_size_per_gpu", "algorithm.kl_ctrl.kl_coef", "trainer.logger",
        "trainer.project_name", "trainer.experiment_name", "trainer.default_hdfs_dir",
        "trainer.default_local_dir", "trainer.resume_mode", "trainer.n_gpus_per_node", "trainer.nnodes",
        "trainer.save_freq", "trainer.test_freq", "trainer.total_epochs",
    }
)
# Where the critic's FSDP settings live, by veRL version (the chart's ppo-job.verlFacts).
CRITIC_FSDP_KEY = {"0.3.0.post1": "critic.model.fsdp_config", "0.4.1": "critic.model.fsdp_config", "0.9.1": "critic.fsdp"}
# Versions whose reward model rollout engine is a mandatory value the chart fills.
REWARD_ROLLOUT_NAME_VERSIONS = {"0.9.1"}


def rendered_keys(job: dict[str, Any]) -> set[str]:
    """Every key the chart renders for these ppo-job values (the switches add theirs)."""
    keys = set(ALWAYS_RENDERED_KEYS)
    if job["actor"]["useDynamicBsz"]:
        keys |= {"actor_rollout_ref.actor.use_dynamic_bsz", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu",
                 "critic.ppo_max_token_len_per_gpu"}
    switches = {
        "actor_rollout_ref.actor.fsdp_config.param_offload": job["actor"]["paramOffload"],
        "actor_rollout_ref.actor.fsdp_config.optimizer_offload": job["actor"]["optimizerOffload"],
        "actor_rollout_ref.ref.fsdp_config.param_offload": job["ref"]["paramOffload"],
        f"{CRITIC_FSDP_KEY[job['verlVersion']]}.param_offload": job["critic"]["paramOffload"],
        f"{CRITIC_FSDP_KEY[job['verlVersion']]}.optimizer_offload": job["critic"]["optimizerOffload"],
        "trainer.max_actor_ckpt_to_keep": job["trainer"].get("maxCheckpointsToKeep") is not None,
        "trainer.max_critic_ckpt_to_keep": job["trainer"].get("maxCheckpointsToKeep") is not None,
        "reward.reward_model.rollout.name": job["verlVersion"] in REWARD_ROLLOUT_NAME_VERSIONS,
    }
    return keys | {key for key, on in switches.items() if on}


@dataclass(frozen=True)
class Finding:
    field: str
    value: Any
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.field}={self.value}: {self.problem}; fix: {self.fix}"


def deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of -f files: maps merge key by key, anything else replaces, null deletes."""
    merged = copy.deepcopy(base)
    for key, value in overlay.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def effective_values(overlays: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The chart's defaults with each overlay applied in order, as `helm install -f a -f b` does."""
    values = yaml.safe_load(paths.CHART_VALUES.read_text())
    for overlay in overlays:
        values = deep_merge(values, overlay or {})
    return values


def schema_findings(values: dict[str, Any]) -> list[Finding]:
    validator = jsonschema.Draft7Validator(values_schema())
    findings = []
    for error in sorted(validator.iter_errors(values), key=lambda e: list(map(str, e.absolute_path))):
        field = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        findings.append(Finding(field, _short(error.instance), error.message, "see charts/verl-ppo/values.yaml"))
    return findings


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def name_findings(values: dict[str, Any], release_name: str) -> list[Finding]:
    override = values["global"].get("fullnameOverride") or ""
    fullname = override or release_name
    field = "global.fullnameOverride" if override else "release name"
    findings = []
    if len(fullname) > MAX_FULLNAME:
        findings.append(Finding(field, fullname, f"is {len(fullname)} characters; KubeRay and the Job controller "
                                f"append suffixes, so at most {MAX_FULLNAME} fit", "choose a shorter name"))
    if not DNS_1035.match(fullname):
        findings.append(Finding(field, fullname, "is not a DNS-1035 label, which KubeRay requires of a RayCluster name",
                                "use lower-case letters, digits and '-', starting with a letter"))
    return findings


def storage_findings(values: dict[str, Any]) -> list[Finding]:
    storage, existing = values["storage"], values["global"]["storage"].get("existingClaim")
    findings = []
    if storage["enabled"] and existing:
        findings.append(Finding("global.storage.existingClaim", existing, "is set while storage.enabled=true would "
                                "create a second claim", "set storage.enabled=false, or unset existingClaim"))
    if not storage["enabled"] and not existing:
        findings.append(Finding("global.storage.existingClaim", "", "must not be empty with storage.enabled=false",
                                "set global.storage.existingClaim=<ReadWriteMany claim>"))
    if storage["enabled"] and storage["type"] == "tos":
        for key in ("bucket", "region", "endpoint", "secretName"):
            if not storage["tos"].get(key):
                fix = ("name an existing Secret with keys AccessKeyId and SecretAccessKey" if key == "secretName"
                       else f"set storage.tos.{key}")
                findings.append(Finding(f"storage.tos.{key}", "", "must not be empty", fix))
    if storage["enabled"] and storage["type"] == "nas" and not storage["nas"].get("server"):
        findings.append(Finding("storage.nas.server", "", "must not be empty", "set the NAS mount target address"))
    return findings


def shape_findings(values: dict[str, Any]) -> list[Finding]:
    shape, gpu, ray = values["gpuShape"], values["global"]["gpu"], values["raycluster"]
    findings = []
    if gpu["perNode"] > shape["gpusPerNode"]:
        findings.append(Finding("global.gpu.perNode", gpu["perNode"], f"exceeds the {shape['gpusPerNode']} GPUs of a "
                                f"{shape['name']} node", "use at most gpuShape.gpusPerNode"))
    workers = gpu["nodes"] - (1 if ray["head"]["trainsOnHead"] else 0)
    autoscaling = ray["worker"]["autoscaling"]
    if autoscaling["enabled"] and not autoscaling["minReplicas"] <= workers <= autoscaling["maxReplicas"]:
        findings.append(Finding("raycluster.worker.autoscaling", f"min {autoscaling['minReplicas']}, max "
                                f"{autoscaling['maxReplicas']}", f"does not contain the {workers} workers training "
                                "needs (global.gpu.nodes)", f"use minReplicas <= {workers} <= maxReplicas"))
    for role in ("head", "worker"):
        resources = ray[role]["resources"]
        if cpu_millis(resources["cpu"]) > cpu_millis(shape["allocatable"]["cpu"]):
            findings.append(Finding(f"raycluster.{role}.resources.cpu", resources["cpu"], "does not fit the "
                                    f"{shape['allocatable']['cpu']} allocatable CPU of a {shape['name']} node",
                                    "lower it; the generator uses 80% of allocatable"))
        if memory_bytes(resources["memory"]) > memory_bytes(shape["allocatable"]["memory"]):
            findings.append(Finding(f"raycluster.{role}.resources.memory", resources["memory"], "does not fit the "
                                    f"{shape['allocatable']['memory']} allocatable memory of a {shape['name']} node",
                                    "lower it; the generator uses 80% of allocatable"))
    return findings


def batch_findings(values: dict[str, Any]) -> list[Finding]:
    """veRL's batch arithmetic (n = GPUs in total, B = train batch, N = responses per prompt)."""
    job, gpu = values["ppo-job"], values["global"]["gpu"]
    gpus = gpu["nodes"] * gpu["perNode"]
    batch, n = job["data"]["trainBatchSize"], job["rollout"]["responsesPerPrompt"]
    mini, micro = job["actor"]["ppoMiniBatchSize"], job["actor"]["ppoMicroBatchSizePerGpu"]
    findings = []
    if batch * n % gpus:
        findings.append(Finding("ppo-job.data.trainBatchSize", batch, f"times rollout.n ({n}) is not divisible by the "
                                f"{gpus} GPUs in total", f"make trainBatchSize x rollout.n a multiple of {gpus}"))
    if mini > batch:
        findings.append(Finding("ppo-job.actor.ppoMiniBatchSize", mini, f"is larger than data.trainBatchSize ({batch})",
                                "make it at most the train batch size"))
    normalized = mini * n // gpus
    if normalized <= 0:
        findings.append(Finding("ppo-job.actor.ppoMiniBatchSize", mini, f"x rollout.n ({n}) / {gpus} GPUs is 0 samples "
                                "per GPU", f"use at least {gpus}"))
    elif not job["actor"]["useDynamicBsz"]:
        for field, value in (("ppo-job.actor.ppoMicroBatchSizePerGpu", micro),
                             ("ppo-job.critic.ppoMicroBatchSizePerGpu", job["critic"]["ppoMicroBatchSizePerGpu"])):
            if normalized % value:
                findings.append(Finding(field, value, f"must divide {normalized} (mini batch {mini} x n {n} / {gpus} "
                                        "GPUs)", "choose a divisor of that number"))
    tp = job["rollout"]["tensorModelParallelSize"]
    if gpu["perNode"] % tp:
        findings.append(Finding("ppo-job.rollout.tensorModelParallelSize", tp, f"must divide global.gpu.perNode "
                                f"({gpu['perNode']}): a rollout replica may not span nodes", "use a divisor of it"))
    return findings


def extra_args_findings(values: dict[str, Any]) -> list[Finding]:
    findings, rendered = [], rendered_keys(values["ppo-job"])
    for index, arg in enumerate(values["ppo-job"].get("extraArgs") or []):
        field, key = f"ppo-job.extraArgs[{index}]", arg.split("=", 1)[0]
        if arg.startswith(("+", "~")):
            findings.append(Finding(field, arg, "adds or deletes a config key; that hides typos in key names",
                                    "write plain key=value for a key veRL's config has"))
        elif not OVERRIDE.match(arg):
            findings.append(Finding(field, arg, "is not a Hydra key=value override", "write it as section.key=value"))
        elif key in rendered:
            findings.append(Finding(field, arg, "sets a key the chart already renders from values",
                                    "set the matching ppo-job value instead"))
        elif key in UNSIZED_TWINS:
            findings.append(Finding(field, arg, f"conflicts with {key}_per_gpu, which the chart sets",
                                    "set the per-GPU value in ppo-job instead"))
    return findings


def ingress_findings(values: dict[str, Any]) -> list[Finding]:
    ingress = values["raycluster"]["ingress"]
    if not ingress["enabled"]:
        return []
    access = ingress["accessControl"]
    if ingress["provider"] != "nginx" and (access.get("sourceRanges") or access.get("basicAuthSecret")):
        return [Finding("raycluster.ingress.accessControl", ingress["provider"], "sourceRanges and basicAuthSecret "
                        "are applied through nginx annotations only", "restrict access on the load balancer and set "
                        "accessControl.enforcedExternally=true")]
    if not (access.get("sourceRanges") or access.get("basicAuthSecret") or access.get("enforcedExternally")
            or ingress.get("allowUnauthenticated")):
        return [Finding("raycluster.ingress.enabled", True, "exposes the Ray dashboard, which runs any job it is sent, "
                        "without an access control", "set accessControl.sourceRanges or .basicAuthSecret, "
                        ".enforcedExternally=true, or allowUnauthenticated=true")]
    policy = values["raycluster"]["networkPolicy"]
    if policy["enabled"] and not policy.get("dashboardFrom") and not policy.get("dashboardFromAnywhere"):
        return [Finding("raycluster.networkPolicy.dashboardFrom", [], "is empty while the Ingress is on: any pod could "
                        "reach the dashboard port directly, past the Ingress's access control",
                        "name the ingress controller's peers (a namespaceSelector; an ipBlock of the load balancer's "
                        "subnet for an ALB), or set raycluster.networkPolicy.dashboardFromAnywhere=true")]
    return []


def head_service_findings(values: dict[str, Any]) -> list[Finding]:
    """raycluster.validateHeadService: a head Service outside the cluster needs an explicit opt-in."""
    head = values["raycluster"]["head"]
    if head["serviceType"] != "ClusterIP" and not head.get("allowUnauthenticatedService"):
        return [Finding("raycluster.head.serviceType", head["serviceType"], "publishes the Ray dashboard and client "
                        "ports, which run any code they are sent, outside the cluster without an access control",
                        "keep ClusterIP and expose the dashboard through raycluster.ingress with an access control, "
                        "or accept the risk with raycluster.head.allowUnauthenticatedService=true")]
    return []


def nccl_findings(values: dict[str, Any]) -> list[Finding]:
    return [
        Finding(f"raycluster.nccl.{name}", value, "is not an NCCL_* variable", "put other variables in raycluster.env")
        for name, value in values["raycluster"]["nccl"].items()
        if not re.match(r"^NCCL_[A-Z0-9_]+$", name)
    ]


def checkpoint_findings(values: dict[str, Any]) -> list[Finding]:
    directory = values["ppo-job"]["trainer"].get("checkpointDir") or ""
    if directory and not directory.startswith("/"):
        return [Finding("ppo-job.trainer.checkpointDir", directory, "is relative: checkpoints would be lost with "
                        "Ray's temporary working dir", "use an absolute path on the shared volume")]
    return []


def observability_findings(values: dict[str, Any]) -> list[Finding]:
    """raycluster.validateObservability and verl-ppo.preflight.tensorboard: the TensorBoard path and the OTLP
    endpoint need what they feed."""
    findings = []
    tensorboard = values["global"].get("tensorboard") or {}
    path = tensorboard.get("ingressPath") or ""
    ingress = values["raycluster"]["ingress"]
    if path and not tensorboard.get("enabled"):
        findings.append(Finding("global.tensorboard.ingressPath", path, "routes to TensorBoard, which is off",
                                "set global.tensorboard.enabled=true, or leave ingressPath empty"))
    elif path and not ingress["enabled"]:
        findings.append(Finding("global.tensorboard.ingressPath", path, "is a path on the dashboard Ingress, which is "
                                "off", "set raycluster.ingress.enabled=true (with an access control), or leave "
                                "ingressPath empty"))
    elif path and path.rstrip("/") == ingress["path"].rstrip("/"):
        findings.append(Finding("global.tensorboard.ingressPath", path, "is the Ray dashboard's own path "
                                "(raycluster.ingress.path)", "use another path, e.g. /tensorboard"))
    if path and not values["observability"]["enabled"]:
        findings.append(Finding("global.tensorboard.ingressPath", path, "routes to TensorBoard's Service, which "
                                "observability.enabled=false does not create", "set observability.enabled=true, or "
                                "leave ingressPath empty"))
    hook = values["raycluster"]["tracing"]["startupHook"]
    if hook.get("otlpEndpoint") and not hook["enabled"]:
        findings.append(Finding("raycluster.tracing.startupHook.otlpEndpoint", hook["otlpEndpoint"], "is used only by "
                                "the tracing startup hook, which is off", "set raycluster.tracing.startupHook."
                                "enabled=true, or leave otlpEndpoint empty"))
    return findings


def prepare_findings(values: dict[str, Any]) -> list[Finding]:
    """The preparation Job writes the run's inputs: they must be on the shared volume, its sources named."""
    job = values["ppo-job"]
    prepare = job["prepare"]
    if not (job["enabled"] and prepare["enabled"]):
        return []
    mount = values["global"]["storage"]["mountPath"].rstrip("/") + "/"
    findings = [
        Finding(field, path, f"is not on the shared volume ({mount}): the preparation Job could not write it "
                "where the run reads it", f"put it under {mount} or set ppo-job.prepare.enabled=false")
        for field, path in (("ppo-job.data.trainFiles", job["data"]["trainFiles"]),
                            ("ppo-job.data.valFiles", job["data"]["valFiles"]),
                            ("ppo-job.model.path", job["model"]["path"]))
        if not path.startswith(mount)
    ]
    source_key = "localPath" if prepare["source"] == "local" else "id"
    for part in ("dataset", "model"):
        if not prepare[part][source_key]:
            field = f"ppo-job.prepare.{part}.{source_key}"
            findings.append(Finding(field, "", "must not be empty", f"ppo-job.prepare.source is {prepare['source']}, "
                                    f"please add --set {field}=..."))
    return findings


def verl_config_findings(values: dict[str, Any]) -> list[Finding]:
    """extraArgs keys that veRL's own config (of the chosen version) does not have, where it is available."""
    job = values["ppo-job"]
    version = str(job["verlVersion"])
    directory = verlconfig.config_dir(version)
    if directory is None or not verlconfig.hydra_available():
        return []
    findings = []
    for index, arg in enumerate(job.get("extraArgs") or []):
        if not OVERRIDE.match(arg):
            continue  # extra_args_findings names it already
        why = verlconfig.rejected_override(directory, arg)
        if why:
            findings.append(Finding(f"ppo-job.extraArgs[{index}]", arg, f"is rejected by veRL {version}'s config: {why}",
                                    "fix the key (see veRL's trainer/config/ppo_trainer.yaml)"))
    return findings


def unchecked_extra_args(values: dict[str, Any]) -> str | None:
    """A note when extraArgs could not be checked against veRL's config, else None."""
    job = values["ppo-job"]
    version = str(job["verlVersion"])
    if not job.get("extraArgs"):
        return None
    if not verlconfig.hydra_available():
        return "extraArgs not checked against veRL's config: hydra-core is not installed"
    if verlconfig.config_dir(version) is None:
        return f"extraArgs not checked against veRL's config: veRL {version}'s config not found (run make setup)"
    return None


def check_values(values: dict[str, Any], release_name: str = "verl-ppo") -> list[Finding]:
    """All findings for effective values; the rules run only on schema-valid values."""
    findings = schema_findings(values)
    if findings:
        return findings
    for rule in (storage_findings, shape_findings, batch_findings, extra_args_findings, ingress_findings,
                 head_service_findings, nccl_findings, checkpoint_findings, prepare_findings, verl_config_findings,
                 observability_findings):
        findings.extend(rule(values))
    return name_findings(values, release_name) + findings
