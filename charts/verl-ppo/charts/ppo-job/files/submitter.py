"""Submit the veRL PPO run to the RayCluster once, follow it, and exit with its real outcome.

Standard library only: it speaks the Ray Jobs REST API of the head's dashboard, so any image with
python3 runs it. The outcome comes from GET /api/jobs/<id> (status, driver_exit_code), never from
`ray job` CLI exit codes, which report 1 for both a failed job and a duplicate id.

Submission ids are <prefix>-a<attempt>. The prefix is the Job's name, <family>-<hash of the run's
spec>: a `helm upgrade` that leaves the run alone keeps the Job and its run; one that changes it makes
a new Job, whose submitter stops the release's superseded runs before it submits. A pod retried while
the Ray job runs finds it and re-attaches; only after a FAILED or STOPPED attempt is a new one
started (veRL's resume_mode=auto resumes it from the last checkpoint), up to VERL_PPO_MAX_ATTEMPTS.

It prints the run's log as it grows, each byte once (logtail.py: Ray's tail websocket, not the whole log
on every poll, so its cost stays flat over a week-long run). Without GCS fault tolerance a lost head takes
its Ray jobs with it: when a new head does not know the run (404), or the dashboard has not answered for
VERL_PPO_DASHBOARD_TIMEOUT_SECONDS, the submitter waits for the cluster's GPUs again, then re-attaches if
the head still has the run, or else counts the attempt as lost and starts the next one. With GCS fault
tolerance a new head keeps the run's record (RUNNING) but not its driver, which ran on the old head: after
the dashboard was silent the submitter checks that the driver's node is alive and counts the attempt as
lost when it is not (DriverGone). It submits only after the head, answering, has shown that the run is
not there or its driver gone: never two runs at once.

Before anything is submitted, the inputs on the shared volume (data files, model config, reward
function) must be there: checked once, or waited for while the chart's preparation Job writes them.
And the checkpoint veRL would resume from must have been written by as many GPUs as the release has:
its FSDP shards are per rank (global_step_N/actor/model_world_size_W_rank_R.pt), so a run resumed
on another GPU count fails deep inside the run, after the cluster came up. Then, before a new
attempt is submitted, the preflight (preflight.py, a short Ray job with a task on every node) checks
the shared volume, the inputs, the GPUs and the NCCL environment on every Ray node; when it fails the
run is not submitted (exit 5) and its per-node table says which node is wrong. A node that left while
the preflight ran (a worker pod being replaced) fails no check: the submitter waits for the cluster to be
whole again and runs the preflight anew, up to PREFLIGHT_RUNS times. A module the run imports by name
(VERL_PPO_RUN_MODULE: the chart's plug-ins for veRL, which veRL loads by the module's name) goes with the run to
every Ray node as a py_modules package, as the preflight program does: the Ray pods need no file of ours.

On SIGTERM it asks the Kubernetes API whether its Job is gone, being deleted or suspended: then it
stops the Ray job (deleting the Job ends the run). Otherwise (eviction, node drain) the run goes on
and the Job's next pod re-attaches. Without an API token it never stops the run on SIGTERM.

Under a KubeRay RayJob (the chart's RayJob mode) KubeRay names the run's one submission id
(RAY_JOB_SUBMISSION_ID, new for each RayJob retry and its new cluster): the submitter submits under
exactly that id unless it exists (a retried pod re-attaches), makes one attempt, and leaves stopping
the run to KubeRay (it stops the job when the RayJob is deleted); the RayJob's outcome is then ours.

What a retry cannot mend ends the pod at once, naming it (exit 2): a file of its own missing or malformed
(the job spec, the preflight program, the run's module), a setting that is not a number, a request the head refuses (an HTTP
4xx other than "not now": 408, 425, 429). What a retry can mend is retried within its bound: no answer, a
timeout, a 5xx (a dashboard restarting, a head being replaced).

With --check (the chart's helm test) it only waits for the cluster's GPUs and exits.
With --stop (the chart's pre-delete hook) it stops every active Ray job of the release's family,
so `helm uninstall` leaves no GPU run behind; it never fails the uninstall.
"""

from __future__ import annotations

import ast
import hashlib
import http.client
import io
import json
import os
import re
import secrets
import shlex
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from typing import Any, Callable

from logtail import LogTail, TailGone, ray_auth_headers

TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}
# veRL's checkpoint layout: the tracker file names the newest step; each rank writes its actor shard.
CHECKPOINT_TRACKER = "latest_checkpointed_iteration.txt"
ACTOR_SHARD = re.compile(r"model_world_size_(\d+)_rank_\d+\.pt$")
ACTIVE = {"PENDING", "RUNNING"}
PREFLIGHT_RUNS = 3  # preflights in one pod that a node may leave before the pod gives up (exit 5)
PREFLIGHT_MODULE = "verl_ppo_preflight"  # preflight.py's module name on the Ray nodes (a py_modules package)
UNMENDABLE_EXIT = 2
# HTTP answers that mean "not now" rather than "not this": another try may be answered.
TRANSIENT_HTTP = {408, 425, 429}


class Unmendable(Exception):
    """An error no retry mends: the pod ends at once (exit 2), its message naming the cause."""


def refused(error: BaseException) -> bool:
    """Whether an answer is the head's refusal of the request itself (a 4xx other than "not now")."""
    return isinstance(error, urllib.error.HTTPError) and 400 <= error.code < 500 and error.code not in TRANSIENT_HTTP


def answer_text(error: urllib.error.HTTPError) -> str:
    """The body of an error answer, read once and kept on the error (the head says why in it)."""
    if not hasattr(error, "answer_text"):
        try:
            error.answer_text = error.read().decode(errors="replace").strip()
        except (OSError, AttributeError, ValueError):
            error.answer_text = ""
    return error.answer_text


def refusal(error: urllib.error.HTTPError) -> Unmendable:
    """The head's refusal, as the pod's last words: the URL, the status and the last line of the head's reason."""
    text = answer_text(error)
    reason = f": {text.splitlines()[-1][:300]}" if text else ""
    return Unmendable(f"the Jobs API refused {error.url} with HTTP {error.code} {error.reason}{reason}")


@dataclass
class Settings:
    dashboard_url: str
    job_spec: dict[str, Any]
    submission_family: str  # every run of the release: <family>-<spec hash>-a<attempt>
    submission_prefix: str  # this run: the Job's name, <family>-<spec hash>
    submission_id: str  # under a KubeRay RayJob: the one id KubeRay follows (RAY_JOB_SUBMISSION_ID); else ""
    expected_gpus: float
    wait_timeout_seconds: float
    max_attempts: int
    inputs: list[str]
    wait_for_inputs: bool
    inputs_timeout_seconds: float
    resume_check_dir: str = ""  # veRL's checkpoint directory when it resumes from there (resume_mode auto)
    poll_seconds: float = 5.0
    dashboard_timeout_seconds: float = 300.0  # a dashboard silent this long while following: the head is lost
    preflight_program: str = ""  # path of preflight.py; empty: no preflight
    preflight_expected: dict[str, Any] | None = None
    run_module: str = ""  # path of a module the run imports by its file's name (<name>.py); empty: none

    @classmethod
    def from_env(cls) -> "Settings":
        """The settings of the chart's environment; Unmendable naming the variable or file that is wrong."""
        try:
            return cls._from_env()
        except KeyError as error:
            raise Unmendable(f"{error.args[0]} is not set (the chart sets it: is this the chart's Job?)") from None

    @classmethod
    def _from_env(cls) -> "Settings":
        job_spec = read_job_spec(os.environ["VERL_PPO_JOB_SPEC"])
        return cls(
            dashboard_url=dashboard_url(),
            job_spec=job_spec,
            submission_family=os.environ["VERL_PPO_SUBMISSION_FAMILY"],
            submission_prefix=os.environ.get("VERL_PPO_SUBMISSION_PREFIX", ""),
            submission_id=os.environ.get("RAY_JOB_SUBMISSION_ID", ""),
            expected_gpus=_setting("VERL_PPO_EXPECTED_GPUS", None, float),
            wait_timeout_seconds=_setting("VERL_PPO_WAIT_TIMEOUT_SECONDS", "1800", float),
            max_attempts=_setting("VERL_PPO_MAX_ATTEMPTS", "3", int),
            inputs=_setting("VERL_PPO_INPUTS", "[]", json.loads),
            wait_for_inputs=os.environ.get("VERL_PPO_WAIT_FOR_INPUTS", "false") == "true",
            inputs_timeout_seconds=_setting("VERL_PPO_INPUTS_TIMEOUT_SECONDS", "7200", float),
            resume_check_dir=os.environ.get("VERL_PPO_RESUME_CHECK_DIR", ""),
            poll_seconds=_setting("VERL_PPO_POLL_SECONDS", "5", float),
            dashboard_timeout_seconds=_setting("VERL_PPO_DASHBOARD_TIMEOUT_SECONDS", "300", float),
            preflight_program=os.environ.get("VERL_PPO_PREFLIGHT", ""),
            preflight_expected=_setting("VERL_PPO_PREFLIGHT_EXPECTED", "{}", json.loads),
            run_module=os.environ.get("VERL_PPO_RUN_MODULE", ""),
        )

    def check_preflight_program(self) -> None:
        """The preflight program is the chart's file: missing or broken, no retry brings it."""
        if not self.preflight_program:
            return
        try:
            with open(self.preflight_program, encoding="utf-8") as program:
                preflight_constant(program.read(), "NODES_LEFT")
        except (OSError, SyntaxError, ValueError) as error:
            raise Unmendable(f"the preflight program {self.preflight_program} (VERL_PPO_PREFLIGHT) cannot be used "
                             f"({error}); the chart mounts it from its ConfigMap, or ppo-job.preflight.enabled=false "
                             "skips the preflight") from None

    def check_run_module(self) -> None:
        """The run's module is the chart's file: missing or not Python, no retry brings it."""
        if not self.run_module:
            return
        try:
            with open(self.run_module, encoding="utf-8") as module:
                ast.parse(module.read())
        except (OSError, SyntaxError, ValueError) as error:
            raise Unmendable(f"the run's module {self.run_module} (VERL_PPO_RUN_MODULE) cannot be used ({error}); "
                             "the chart mounts it from its ConfigMap, or ppo-job.trainer.rolloutPollSeconds=null "
                             "and ppo-job.rollout.finalOutputOnly=false run veRL without it") from None

    def family_pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.submission_family) + r"-[0-9a-f]+-a\d+$")


def dashboard_url() -> str:
    """The head's Jobs API. Under a RayJob, KubeRay's own address for it (RAY_DASHBOARD_ADDRESS, host:port of
    the head Service of the cluster it made for this run, which its controller follows too): exactly this
    attempt's head, where RAY_DASHBOARD_URL (the chart's Service selecting by the RayJob's pod label) may
    briefly reach the previous attempt's too."""
    address = os.environ.get("RAY_DASHBOARD_ADDRESS", "") if os.environ.get("RAY_JOB_SUBMISSION_ID") else ""
    if address:
        return address.rstrip("/") if "://" in address else f"http://{address.rstrip('/')}"
    return os.environ["RAY_DASHBOARD_URL"].rstrip("/")


def _setting(name: str, default: str | None, parse: Callable[[str], Any]) -> Any:
    """A variable of the chart's environment, parsed; Unmendable naming it when it is not what it should be."""
    text = os.environ[name] if default is None else os.environ.get(name, default)
    try:
        return parse(text)
    except ValueError:
        kind = "JSON value" if parse is json.loads else parse.__name__
        raise Unmendable(f"{name}={text!r} is not a {kind}") from None


def read_job_spec(path: str) -> dict[str, Any]:
    """The run's Ray job spec (the chart's job.json): an object with an entrypoint command."""
    try:
        with open(path, encoding="utf-8") as spec_file:
            spec = json.load(spec_file)
    except (OSError, ValueError) as error:
        raise Unmendable(f"the job spec {path} (VERL_PPO_JOB_SPEC) cannot be read ({error})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("entrypoint"), str) or not spec["entrypoint"].strip():
        raise Unmendable(f"the job spec {path} (VERL_PPO_JOB_SPEC) is no JSON object with an entrypoint command")
    for key, kind in (("runtime_env", dict), ("metadata", dict)):
        if spec.get(key) is not None and not isinstance(spec[key], kind):
            raise Unmendable(f"the job spec {path} (VERL_PPO_JOB_SPEC): {key} is no JSON object")
    return spec


class RayJobsAPI:
    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url
        self.timeout = timeout

    def build(self, method: str, path: str, body: Any = None, content: bytes | None = None) -> urllib.request.Request:
        """Every request to the head is made here (its headers in one place): a JSON body, or raw content."""
        data = content if content is not None else None if body is None else json.dumps(body).encode()
        kind = "application/json" if content is None else "application/octet-stream"
        return urllib.request.Request(
            self.base_url + path, data=data, method=method,
            headers={"Content-Type": kind, **ray_auth_headers()},
        )

    def request(self, method: str, path: str, body: Any = None, content: bytes | None = None) -> Any:
        with urllib.request.urlopen(self.build(method, path, body, content), timeout=self.timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def ensure_package(self, name: str, content: bytes) -> str:
        """A runtime_env package in the head's GCS, uploaded unless it is there; its gcs:// URI. As Ray's own job
        client does: the GET pins the package for a while (the submission that follows references it)."""
        try:
            self.request("GET", f"/api/packages/gcs/{name}")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
            self.request("PUT", f"/api/packages/gcs/{name}", content=content)
        return f"gcs://{name}"

    def list_jobs(self) -> list[dict[str, Any]]:
        return self.request("GET", "/api/jobs/") or []

    def job(self, submission_id: str) -> dict[str, Any]:
        return self.request("GET", f"/api/jobs/{submission_id}")

    def submit(self, submission_id: str, spec: dict[str, Any]) -> None:
        body = {
            "entrypoint": spec["entrypoint"],
            "submission_id": submission_id,
            "runtime_env": spec.get("runtime_env") or {},
            "metadata": {k: str(v) for k, v in (spec.get("metadata") or {}).items()},
        }
        self.request("POST", "/api/jobs/", body)

    def stop(self, submission_id: str) -> None:
        self.request("POST", f"/api/jobs/{submission_id}/stop")

    def alive_nodes(self) -> list[dict[str, Any]]:
        """The alive nodes' records, as Ray itself lists them (state API)."""
        reply = self.request("GET", "/api/v0/nodes?limit=10000&detail=true")
        return [node for node in _find_node_records(reply) if node.get("state", "ALIVE") == "ALIVE"]

    def cluster_gpus(self) -> float:
        """GPUs of the alive nodes."""
        return sum(float((node.get("resources_total") or {}).get("GPU", 0)) for node in self.alive_nodes())

    def alive_heads(self) -> int:
        """Head nodes listed alive: more than one while a new head (GCS fault tolerance) has not yet found
        the old one dead, whose node Ray may still pick for a new job's supervisor."""
        return sum(1 for node in self.alive_nodes() if node.get("is_head_node"))


def _find_node_records(value: Any) -> list[dict[str, Any]]:
    """The state API nests its node list a few levels deep; collect every record with resources_total."""
    if isinstance(value, dict):
        if "resources_total" in value:
            return [value]
        return [record for child in value.values() for record in _find_node_records(child)]
    if isinstance(value, list):
        return [record for child in value for record in _find_node_records(child)]
    return []


def log(message: str) -> None:
    print(f"[verl-ppo submitter] {message}", flush=True)


def wait_for_cluster(api: RayJobsAPI, settings: Settings) -> None:
    deadline = time.monotonic() + settings.wait_timeout_seconds
    seen = "no answer from the dashboard"
    while True:
        try:
            gpus = api.cluster_gpus()
            seen = f"{gpus:g} GPUs"
            if gpus >= settings.expected_gpus:
                heads = api.alive_heads()
                if heads <= 1:
                    log(f"cluster ready: {seen} (need {settings.expected_gpus:g})")
                    return
                seen += f" and {heads} head nodes alive (a replaced head not yet marked dead)"
        except (urllib.error.URLError, OSError, ValueError) as error:
            if refused(error):  # e.g. a dashboardURL that leads elsewhere, or credentials the head refuses
                raise refusal(error) from None
            seen = f"dashboard not answering ({error})"
        if time.monotonic() >= deadline:
            log(
                f"timed out after {settings.wait_timeout_seconds:g}s waiting for the cluster: expected "
                f"{settings.expected_gpus:g} GPUs, saw {seen}"
            )
            sys.exit(3)
        time.sleep(settings.poll_seconds)


def missing_inputs(paths: list[str]) -> list[str]:
    return [path for path in paths if not os.path.exists(path)]


def wait_for_inputs(settings: Settings) -> None:
    """The run's data and model must be on the shared volume before a GPU is spent on them."""
    deadline = time.monotonic() + settings.inputs_timeout_seconds
    announced = False
    while missing := missing_inputs(settings.inputs):
        if not settings.wait_for_inputs:
            log(f"missing on the shared volume: {', '.join(missing)}. Copy them there, or enable "
                "ppo-job.prepare to fetch them before the run")
            sys.exit(4)
        if time.monotonic() >= deadline:
            log(f"timed out after {settings.inputs_timeout_seconds:g}s waiting for the preparation Job to "
                f"write: {', '.join(missing)} (see its logs)")
            sys.exit(4)
        if not announced:
            log(f"waiting for the preparation Job to write: {', '.join(missing)}")
            announced = True
        time.sleep(settings.poll_seconds)
    if settings.inputs:
        log(f"inputs present: {', '.join(settings.inputs)}")


def checkpoint_world_sizes(checkpoint_dir: str) -> tuple[str, set[int]] | None:
    """(the newest checkpoint's actor directory, the world sizes of its shards), as veRL's resume finds it
    (the tracker file's step); None where veRL would start from scratch."""
    try:
        with open(os.path.join(checkpoint_dir, CHECKPOINT_TRACKER), encoding="utf-8") as tracker:
            step = int(tracker.read().strip())
    except (OSError, ValueError):
        return None
    actor = os.path.join(checkpoint_dir, f"global_step_{step}", "actor")
    try:
        names = os.listdir(actor)
    except OSError:
        return None
    return actor, {int(match.group(1)) for name in names if (match := ACTOR_SHARD.match(name))}


def check_resumable(settings: Settings) -> None:
    """Fails before submitting when veRL would resume from a checkpoint of another GPU count."""
    if not settings.resume_check_dir:
        return
    found = checkpoint_world_sizes(settings.resume_check_dir)
    if found is None:
        return
    actor, sizes = found
    expected = int(settings.expected_gpus)
    if not sizes:
        log(f"resuming from {actor}: no model_world_size_W_rank_R.pt shards there to check")
        return
    if sizes == {expected}:
        log(f"resuming from {actor}: written by {expected} GPUs, as many as this release has")
        return
    written = "/".join(str(size) for size in sorted(sizes))
    log(f"cannot resume: the newest checkpoint {actor} was written by {written} GPUs, this release has "
        f"{expected} (global.gpu.nodes x global.gpu.perNode); veRL loads its shards per rank and would fail "
        f"inside the run. Either start a new run in a new checkpoint directory (--set "
        f"ppo-job.trainer.experimentName=<new name>), or go back to {written} GPUs in total (global.gpu.nodes x "
        f"global.gpu.perNode = {written})")
    sys.exit(5)


def attempts_of(api: RayJobsAPI, prefix: str) -> dict[int, dict[str, Any]]:
    pattern = re.compile(re.escape(prefix) + r"-a(\d+)$")
    found = {}
    for job in api.list_jobs():
        match = pattern.match(job.get("submission_id") or "")
        if match:
            found[int(match.group(1))] = job
    return found


@dataclass
class Choice:
    submission_id: str
    attempt: int
    submit: bool  # a new attempt; else re-attach (or report an attempt that ended)
    status: str = ""  # of the attempt re-attached to; LOST: gone with its head, nothing left to follow


LOST = "LOST"


def choose_submission(api: RayJobsAPI, settings: Settings, lost: set[int] = frozenset(),
                      orphaned: set[int] = frozenset()) -> Choice:
    """The attempt to follow or to submit. `lost` are this pod's attempts that vanished with their head: a new
    head knows nothing of them, yet they count against maxAttempts. `orphaned` are those whose record a new
    head kept while their driver went (DriverGone): lost whatever the record says."""
    attempts = {**{number: {"status": LOST} for number in lost}, **attempts_of(api, settings.submission_prefix),
                **{number: {"status": LOST} for number in orphaned}}
    if not attempts:
        return Choice(f"{settings.submission_prefix}-a1", 1, True)
    latest = max(attempts)
    status = attempts[latest].get("status")
    submission_id = f"{settings.submission_prefix}-a{latest}"
    if status in ACTIVE or status == "SUCCEEDED":
        log(f"re-attaching to {submission_id} ({status})")
        return Choice(submission_id, latest, False, status)
    if latest >= settings.max_attempts:
        log(f"{submission_id} ended {status} and all {settings.max_attempts} attempts are used")
        return Choice(submission_id, latest, False, status)
    log(f"{submission_id} ended {status}: starting attempt {latest + 1}, resuming from the last checkpoint")
    return Choice(f"{settings.submission_prefix}-a{latest + 1}", latest + 1, True)


class HeadLost(Exception):
    """The Ray job cannot be followed: a new head does not know it, or the dashboard stopped answering."""


class DriverGone(HeadLost):
    """A new head has the run's record (GCS fault tolerance keeps the Jobs API's records in Redis) but the
    driver went with the old head: the record says RUNNING and nothing runs it."""


def check_driver(api: RayJobsAPI, job: dict[str, Any]) -> None:
    """Raises DriverGone when an active run's driver node is not among the alive nodes."""
    node = job.get("driver_node_id")
    if not node or job.get("status") not in ACTIVE:
        return
    try:
        alive = {record.get("node_id") for record in api.alive_nodes()}
    except (urllib.error.URLError, OSError, ValueError):
        return  # asked again at the next poll
    if node not in alive:
        raise DriverGone(f"{job.get('submission_id')}'s driver ran on node {node[:12]}, which is gone (the head "
                         "kept its record, nothing runs it)")


def job_status(api: RayJobsAPI, submission_id: str, settings: Settings, silent_since: list[float]) -> dict[str, Any] | None:
    """The job's record; None while the dashboard does not answer (within its bound); HeadLost past it."""
    try:
        job = api.job(submission_id)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise HeadLost(f"the head does not know {submission_id} (a new head: without GCS fault tolerance a "
                           "head's Ray jobs end with it)") from None
        if refused(error):
            raise refusal(error) from None
        failure: Exception = error
    except (urllib.error.URLError, OSError, ValueError) as error:
        failure = error
    else:
        if silent_since:
            log(f"dashboard answers again after {time.monotonic() - silent_since[0]:.0f}s: following {submission_id}")
            silent_since.clear()
        return job
    if not silent_since:
        silent_since.append(time.monotonic())
        log(f"dashboard not answering ({failure}); waiting up to {settings.dashboard_timeout_seconds:g}s for it")
    elif time.monotonic() - silent_since[0] >= settings.dashboard_timeout_seconds:
        raise HeadLost(f"the dashboard did not answer for {settings.dashboard_timeout_seconds:g}s ({failure})")
    time.sleep(settings.poll_seconds)
    return None


def follow(api: RayJobsAPI, tail: LogTail, settings: Settings) -> dict[str, Any]:
    """Prints the job's log as it grows and returns the job's record once it ended and its log is printed."""
    submission_id, silent_since = tail.submission_id, []
    drain_deadline = None
    # After the dashboard was silent (a new head?), for as long again: is the run's driver still on a node?
    check_driver_until = 0.0
    while True:
        was_silent = bool(silent_since)
        job = job_status(api, submission_id, settings, silent_since)
        if job is None:
            continue
        if was_silent:
            check_driver_until = time.monotonic() + settings.dashboard_timeout_seconds
        if time.monotonic() < check_driver_until:
            check_driver(api, job)
        ended = job.get("status") in TERMINAL
        if tail.complete and not ended:
            tail.reopen()  # the tail closed under a running job (the dashboard lost its agent): follow it anew
        if ended and (tail.complete or time.monotonic() >= (drain_deadline or float("inf"))):
            if not tail.complete:
                log(f"{submission_id}'s log tail did not end within {settings.dashboard_timeout_seconds:g}s")
            return job
        if ended and drain_deadline is None:
            drain_deadline = time.monotonic() + settings.dashboard_timeout_seconds
        try:
            tail.pump(settings.poll_seconds)
        except TailGone:
            tail.drop()  # the next status tells whether the head still knows the job


def stop_active(api: RayJobsAPI, pattern: re.Pattern[str], reason: str, keep_prefix: str = "") -> list[str]:
    """Asks the head to stop the active Ray jobs whose ids match; returns their ids."""
    stopped = []
    for job in api.list_jobs():
        submission_id = job.get("submission_id") or ""
        if keep_prefix and submission_id.startswith(keep_prefix + "-a"):
            continue
        if pattern.match(submission_id) and job.get("status") in ACTIVE:
            api.stop(submission_id)
            log(f"stopped {submission_id} ({reason})")
            stopped.append(submission_id)
    return stopped


# How long a new run waits for the runs it stopped to end. Ray ends a stopped driver with SIGTERM, then SIGKILL
# after RAY_JOB_STOP_WAIT_TIME_S (3 s by default); a busy head reports it later.
STOPPED_END_SECONDS = 120


def wait_ended(api: RayJobsAPI, submission_ids: list[str], poll_seconds: float, bound_seconds: float) -> list[str]:
    """Waits until each of these Ray jobs has ended (a head answering 404 no longer has it), at most
    bound_seconds; returns those still running then."""
    deadline = time.monotonic() + bound_seconds
    pending = list(submission_ids)
    while True:
        pending = [i for i in pending if _status_or_gone(api, i) not in TERMINAL | {"GONE"}]
        if not pending or time.monotonic() > deadline:
            return pending
        time.sleep(poll_seconds)


def _status_or_gone(api: RayJobsAPI, submission_id: str) -> str:
    try:
        return api.job(submission_id).get("status", "")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return "GONE"
        raise


# How long the uninstall hook keeps trying the dashboard (its Job's deadline is 120 s): a run left running
# is killed mid-step, perhaps mid-checkpoint, by the RayCluster's deletion. A busy head may time out or
# answer 5xx: up to 60 s. A head that refuses the connection or whose name does not resolve is gone, or
# does not yet admit this new pod: a NetworkPolicy enforcer learns a new pod's address a moment after the
# pod starts and refuses or drops its connections until then (kube-router: about 2 s): up to 20 s, which
# is all a gone head delays the uninstall. Any other answer (4xx, bad JSON) is not tried again.
BUSY_HEAD_SECONDS = 60
UNREACHABLE_HEAD_SECONDS = 20
STOP_RETRY_SECONDS = 1
# Then how long it waits for the stopped runs to end: with the retries above, within the hook's 120 s.
HOOK_END_SECONDS = 45


def _retry_seconds(error: Exception) -> float:
    """How long since the first try a failed stop is worth another try."""
    if isinstance(error, urllib.error.HTTPError):
        return BUSY_HEAD_SECONDS if error.code >= 500 or error.code in TRANSIENT_HTTP else 0
    if isinstance(getattr(error, "reason", error), TimeoutError):
        return BUSY_HEAD_SECONDS
    if isinstance(error, (urllib.error.URLError, OSError)):
        return UNREACHABLE_HEAD_SECONDS
    return 0


def stop_release_jobs(api: RayJobsAPI, settings: Settings) -> int:
    """The uninstall hook: stops every active run of the release and waits for them to end (Helm deletes
    the RayCluster right after the hook: a run still stopping would die mid-step with its head); best
    effort, never fails."""
    started = time.monotonic()
    while True:
        try:
            stopped = stop_active(api, settings.family_pattern(), "helm uninstall")
            break
        except (urllib.error.URLError, OSError, ValueError) as error:
            if time.monotonic() - started >= _retry_seconds(error):
                log(f"could not stop the release's Ray jobs ({error}); the RayCluster's deletion ends them")
                return 0
            log(f"dashboard not answering ({error}); trying again")
            time.sleep(STOP_RETRY_SECONDS)
    try:
        still = wait_ended(api, stopped, STOP_RETRY_SECONDS, HOOK_END_SECONDS)
    except (urllib.error.URLError, OSError, ValueError) as error:
        log(f"could not see the stopped runs end ({error}); the RayCluster's deletion ends them")
        return 0
    if still:
        log(f"{', '.join(still)} still running {HOOK_END_SECONDS}s after the stop; the RayCluster's deletion ends them")
    elif stopped:
        log(f"{', '.join(stopped)} ended")
    return 0


class KubeJob:
    """This pod's Job through the Kubernetes API, read with the pod's ServiceAccount token (get on one Job)."""

    TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
    CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

    def __init__(self, namespace: str, name: str) -> None:
        host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        self.url = os.environ.get("VERL_PPO_KUBE_API") or (f"https://{host}:{port}" if host else "")
        self.url += f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}"
        self.token_file = os.environ.get("VERL_PPO_KUBE_TOKEN_FILE", self.TOKEN)
        self.ca_file = os.environ.get("VERL_PPO_KUBE_CA_FILE", self.CA)

    def usable(self) -> bool:
        return self.url.startswith("https://") and os.path.exists(self.token_file)

    def ended_by_user(self) -> tuple[bool, str]:
        """(True, why) when the Job is gone, being deleted or suspended; (False, why) otherwise or when unsure."""
        if not self.usable():
            return False, "no Kubernetes API token mounted (ppo-job.submitter.stopOnJobDelete is off)"
        with open(self.token_file, encoding="utf-8") as token:
            request = urllib.request.Request(self.url, headers={"Authorization": f"Bearer {token.read().strip()}"})
        context = ssl.create_default_context(cafile=self.ca_file if os.path.exists(self.ca_file) else None)
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as response:
                job = json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return True, "its Job was deleted"
            return False, f"the Kubernetes API answered {error.code}"
        except (urllib.error.URLError, OSError, ValueError) as error:
            return False, f"the Kubernetes API did not answer ({error})"
        if job.get("metadata", {}).get("deletionTimestamp"):
            return True, "its Job is being deleted"
        if job.get("spec", {}).get("suspend"):
            return True, "its Job was suspended"
        return False, "its Job remains (eviction or node drain)"


class Terminated(Exception):
    pass


def raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def on_terminate(api: RayJobsAPI, kube: KubeJob | None, settings: Settings) -> int:
    if kube is None:
        log("terminating: KubeRay's RayJob owns the run (deleting the RayJob stops it); the Ray job keeps running")
        return 143
    ended, why = kube.ended_by_user()
    if not ended:
        log(f"terminating: {why}; the Ray job keeps running and the Job's next pod re-attaches")
        return 143
    log(f"terminating: {why}; stopping the Ray job")
    try:
        stop_active(api, re.compile(re.escape(settings.submission_prefix) + r"-a\d+$"), why)
    except (urllib.error.URLError, OSError, ValueError) as error:
        log(f"could not stop the Ray job ({error})")
    return 143


def given_submission(api: RayJobsAPI, submission_id: str) -> tuple[str, bool]:
    """KubeRay's id for the run: (id, whether it must be submitted), re-attaching when it exists."""
    for job in api.list_jobs():
        if job.get("submission_id") == submission_id:
            log(f"re-attaching to {submission_id} ({job.get('status')})")
            return submission_id, False
    return submission_id, True


class NodesLeft(Exception):
    """A Ray node left while the preflight ran (a pod replaced): no check failed, the cluster changed."""


def preflight_constant(source: str, name: str) -> Any:
    """A constant of preflight.py, read from its source (the one place it is written; the submitter's
    image need not import Ray)."""
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign) and any(getattr(t, "id", None) == name for t in statement.targets):
            return ast.literal_eval(statement.value)
    raise ValueError(f"preflight.py defines no {name}")


def module_package(module: str, source: str) -> tuple[str, bytes]:
    """A Python source as a Ray py_modules package: a zip holding it as <module>.py, named as Ray names its
    packages (_ray_pkg_<content hash>.zip), so an unchanged program is uploaded once to a head."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(f"{module}.py", date_time=(1980, 1, 1, 0, 0, 0)), source)
    content = buffer.getvalue()
    return f"_ray_pkg_{hashlib.sha1(content).hexdigest()}.zip", content


def preflight_package(source: str) -> tuple[str, bytes]:
    """preflight.py as a Ray py_modules package named PREFLIGHT_MODULE."""
    return module_package(PREFLIGHT_MODULE, source)


def run_spec(api: RayJobsAPI, settings: Settings) -> dict[str, Any]:
    """The job spec to submit: the chart's, with the run's module (if any) uploaded and added to its py_modules."""
    if not settings.run_module:
        return settings.job_spec
    with open(settings.run_module, encoding="utf-8") as module:
        source = module.read()
    name = os.path.splitext(os.path.basename(settings.run_module))[0]
    package = api.ensure_package(*module_package(name, source))
    runtime_env = dict(settings.job_spec.get("runtime_env") or {})
    runtime_env["py_modules"] = [*runtime_env.get("py_modules", []), package]
    return {**settings.job_spec, "runtime_env": runtime_env}


def preflight(api: RayJobsAPI, settings: Settings, submission_id: str) -> None:
    """Runs preflight.py as a Ray job in the run's runtime environment, the program shipped through the Jobs API
    as a py_modules package (the Ray pods need no file of ours; Ray's log shows a one-line entrypoint, not the
    source); exits 5 when it fails, so the run is not submitted; NodesLeft when a node left while it ran."""
    with open(settings.preflight_program, encoding="utf-8") as program:
        source = program.read()
    package = api.ensure_package(*preflight_package(source))
    runtime_env = dict(settings.job_spec.get("runtime_env") or {})
    runtime_env["py_modules"] = [*runtime_env.get("py_modules", []), package]
    entrypoint = f"python3 -m {PREFLIGHT_MODULE} {shlex.quote(json.dumps(settings.preflight_expected))}"
    preflight_id = f"{submission_id}-preflight-{secrets.token_hex(3)}"
    api.submit(preflight_id, {**settings.job_spec, "entrypoint": entrypoint, "runtime_env": runtime_env})
    log(f"preflight {preflight_id} submitted")
    job = follow(api, LogTail(settings.dashboard_url, preflight_id, sys.stdout.buffer), settings)
    if job.get("status") == "FAILED" and job.get("driver_exit_code") == preflight_constant(source, "NODES_LEFT"):
        raise NodesLeft(f"{preflight_id}: a Ray node left while it ran")
    if job.get("status") == "FAILED" and job.get("driver_exit_code") is None:  # no check ran: Ray could not start it
        raise NodesLeft(f"{preflight_id} did not start ({job.get('message')})")
    if job.get("status") != "SUCCEEDED":
        log(f"preflight {job.get('status')}: {submission_id} not submitted (table above; "
            f"ppo-job.preflight.enabled=false skips the preflight)")
        sys.exit(5)


def submit_once(api: RayJobsAPI, settings: Settings, lost: set[int], orphaned: set[int]) -> Choice:
    if settings.submission_id:  # a RayJob's own cluster: one run, under KubeRay's id
        submission_id, must_submit = given_submission(api, settings.submission_id)
        choice = Choice(submission_id, 1, must_submit)
    else:
        choice = choose_submission(api, settings, lost, orphaned)
    if not choice.submit:
        return choice
    if settings.preflight_program:
        preflight(api, settings, choice.submission_id)
    if not settings.submission_id:
        # A changed spec (helm upgrade) replaces the run: never two runs of one release on its cluster, so the
        # old run must have ended (not only been asked to stop) before this one is submitted.
        stopped = stop_active(api, settings.family_pattern(), f"superseded by {settings.submission_prefix}",
                              keep_prefix=settings.submission_prefix)
        still = wait_ended(api, stopped, settings.poll_seconds, STOPPED_END_SECONDS)
        if still:  # a stopped driver may still be writing a checkpoint
            log(f"{', '.join(still)} still running {STOPPED_END_SECONDS}s after the stop: not submitting "
                f"(the Job's next pod tries again)")
            sys.exit(1)
    try:
        api.submit(choice.submission_id, run_spec(api, settings))
        log(f"submitted {choice.submission_id}")
    except urllib.error.HTTPError as error:
        # Another pod of this Job (or KubeRay's retried submitter) submitted the same id between our look and our
        # submission: follow that run instead of starting a second one. Ray refuses the id with 400, or with 500
        # when its job agent refused it.
        if "already exists" not in answer_text(error):
            raise
        log(f"{choice.submission_id} already exists (submitted by another pod at the same moment): re-attaching")
    return choice


def stop_orphan(api: RayJobsAPI, submission_id: str) -> None:
    """Asks the head to stop a run whose driver is gone, so that its record may end; best effort."""
    try:
        api.stop(submission_id)
    except (urllib.error.URLError, OSError, ValueError) as error:
        log(f"{submission_id}: stopping its record failed ({error}); it counts as lost all the same")


def run(api: RayJobsAPI, settings: Settings) -> int:
    wait_for_inputs(settings)
    lost: set[int] = set()  # attempts gone with their head
    orphaned: set[int] = set()  # of those, attempts whose record a new head kept (DriverGone)
    tails: dict[str, LogTail] = {}  # one per run followed: re-attaching prints no byte twice
    changed = 0  # preflights the cluster changed under
    failing_since: float | None = None  # the first of the Jobs API's failures in a row
    while True:
        check_resumable(settings)
        wait_for_cluster(api, settings)
        try:
            choice = submit_once(api, settings, lost, orphaned)
        except HeadLost as gone:  # during the preflight: no attempt of the run was submitted
            log(f"preflight: {gone}; waiting for the cluster again")
            continue
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            # The head answered the cluster's state a moment ago. Worth another try as for the uninstall hook (no
            # answer, or a 5xx: a recovering head answers 500); not a refusal or an error of this pod's own.
            if refused(error):
                raise refusal(error) from None
            if not isinstance(error, (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException)):
                raise Unmendable(f"{type(error).__name__} in the submitter's pod: {error}") from None
            failing_since = failing_since or time.monotonic()
            if not _retry_seconds(error) or time.monotonic() - failing_since >= settings.dashboard_timeout_seconds:
                raise
            log(f"the Jobs API failed ({error}); trying again")
            time.sleep(settings.poll_seconds)
            continue
        except NodesLeft as left:
            changed += 1
            if changed >= PREFLIGHT_RUNS:
                log(f"preflight: {left}, {changed} times: the cluster does not hold still; nothing submitted")
                return 5
            log(f"preflight: {left}; waiting for the cluster to be whole again and running it anew")
            continue
        failing_since = None
        if choice.status == LOST:
            return 1
        tail = tails.setdefault(choice.submission_id, LogTail(settings.dashboard_url, choice.submission_id,
                                                              sys.stdout.buffer))
        try:
            job = follow(api, tail, settings)
        except HeadLost as gone:
            if settings.submission_id:
                log(f"{choice.submission_id}: {gone}; KubeRay's RayJob retries the run on a new cluster (backoffLimit)")
                return 1
            log(f"{choice.submission_id}: {gone}; waiting for the cluster to be whole again "
                f"({settings.expected_gpus:g} GPUs, up to {settings.wait_timeout_seconds:g}s)")
            lost.add(choice.attempt)
            if isinstance(gone, DriverGone):
                orphaned.add(choice.attempt)
                stop_orphan(api, choice.submission_id)
            continue
        status = job.get("status")
        log(f"{choice.submission_id}: status={status} driver_exit_code={job.get('driver_exit_code')} "
            f"message={job.get('message')!r}")
        return 0 if status == "SUCCEEDED" else 1


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except Unmendable as error:
        log(f"{error}; not tried again: no retry can mend it")
        return 0 if "--stop" in argv else UNMENDABLE_EXIT  # the uninstall hook never fails the uninstall


def _main(argv: list[str]) -> int:
    settings = Settings.from_env()
    if "--stop" in argv:
        return stop_release_jobs(RayJobsAPI(settings.dashboard_url, timeout=20), settings)
    api = RayJobsAPI(settings.dashboard_url)
    if "--check" in argv:  # helm test: the Jobs API answers and Ray sees the GPUs; submit nothing.
        wait_for_cluster(api, settings)
        return 0
    if not settings.submission_prefix and not settings.submission_id:
        raise Unmendable("VERL_PPO_SUBMISSION_PREFIX is empty: the Job's pod must carry the job-name label")
    settings.check_preflight_program()
    settings.check_run_module()
    kube = None if settings.submission_id else KubeJob(os.environ.get("VERL_PPO_NAMESPACE", ""), settings.submission_prefix)
    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        return run(api, settings)
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one decision, even if the kubelet signals again
        return on_terminate(api, kube, settings)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
