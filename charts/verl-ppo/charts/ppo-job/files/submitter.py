"""Submit the veRL PPO run to the RayCluster once, follow it, and exit with its real outcome.

Standard library only: it speaks the Ray Jobs REST API of the head's dashboard, so any image with
python3 runs it. The outcome comes from GET /api/jobs/<id> (status, driver_exit_code), never from
`ray job` CLI exit codes, which report 1 for both a failed job and a duplicate id.

Submission ids are <prefix>-a<attempt> with prefix <release>-r<revision>: a pod retried while the
Ray job runs finds it and re-attaches; only after a FAILED or STOPPED attempt is a new one started
(veRL's resume_mode=auto resumes it from the last checkpoint), up to VERL_PPO_MAX_ATTEMPTS.

With --check (the chart's helm test) it only waits for the cluster's GPUs and exits.
With --stop (the chart's pre-delete hook) it stops every active Ray job of the release, any revision,
so `helm uninstall` leaves no GPU run behind; it never fails the uninstall.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}
ACTIVE = {"PENDING", "RUNNING"}


@dataclass
class Settings:
    dashboard_url: str
    job_spec: dict[str, Any]
    submission_prefix: str
    expected_gpus: float
    wait_timeout_seconds: float
    max_attempts: int
    poll_seconds: float = 5.0

    @classmethod
    def from_env(cls) -> "Settings":
        with open(os.environ["VERL_PPO_JOB_SPEC"], encoding="utf-8") as spec_file:
            job_spec = json.load(spec_file)
        return cls(
            dashboard_url=os.environ["RAY_DASHBOARD_URL"].rstrip("/"),
            job_spec=job_spec,
            submission_prefix=os.environ["VERL_PPO_SUBMISSION_PREFIX"],
            expected_gpus=float(os.environ["VERL_PPO_EXPECTED_GPUS"]),
            wait_timeout_seconds=float(os.environ.get("VERL_PPO_WAIT_TIMEOUT_SECONDS", "1800")),
            max_attempts=int(os.environ.get("VERL_PPO_MAX_ATTEMPTS", "3")),
            poll_seconds=float(os.environ.get("VERL_PPO_POLL_SECONDS", "5")),
        )


class RayJobsAPI:
    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def list_jobs(self) -> list[dict[str, Any]]:
        return self.request("GET", "/api/jobs/") or []

    def job(self, submission_id: str) -> dict[str, Any]:
        return self.request("GET", f"/api/jobs/{submission_id}")

    def logs(self, submission_id: str) -> str:
        return (self.request("GET", f"/api/jobs/{submission_id}/logs") or {}).get("logs", "")

    def submit(self, submission_id: str, spec: dict[str, Any]) -> None:
        body = {
            "entrypoint": spec["entrypoint"],
            "submission_id": submission_id,
            "runtime_env": spec.get("runtime_env") or {},
            "metadata": {k: str(v) for k, v in (spec.get("metadata") or {}).items()},
        }
        self.request("POST", "/api/jobs/", body)

    def cluster_gpus(self) -> float:
        """GPUs of the alive nodes, as Ray itself counts them (state API)."""
        reply = self.request("GET", "/api/v0/nodes?limit=10000&detail=true")
        return sum(
            float((node.get("resources_total") or {}).get("GPU", 0))
            for node in _find_node_records(reply)
            if node.get("state", "ALIVE") == "ALIVE"
        )


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
                log(f"cluster ready: {seen} (need {settings.expected_gpus:g})")
                return
        except (urllib.error.URLError, OSError, ValueError) as error:
            seen = f"dashboard not answering ({error})"
        if time.monotonic() >= deadline:
            log(
                f"timed out after {settings.wait_timeout_seconds:g}s waiting for the cluster: expected "
                f"{settings.expected_gpus:g} GPUs, saw {seen}"
            )
            sys.exit(3)
        time.sleep(settings.poll_seconds)


def attempts_of(api: RayJobsAPI, prefix: str) -> dict[int, dict[str, Any]]:
    pattern = re.compile(re.escape(prefix) + r"-a(\d+)$")
    found = {}
    for job in api.list_jobs():
        match = pattern.match(job.get("submission_id") or "")
        if match:
            found[int(match.group(1))] = job
    return found


def choose_submission(api: RayJobsAPI, settings: Settings) -> tuple[str, bool]:
    """Returns (submission id, whether it must be submitted)."""
    attempts = attempts_of(api, settings.submission_prefix)
    if not attempts:
        return f"{settings.submission_prefix}-a1", True
    latest = max(attempts)
    status = attempts[latest].get("status")
    submission_id = f"{settings.submission_prefix}-a{latest}"
    if status in ACTIVE or status == "SUCCEEDED":
        log(f"re-attaching to {submission_id} ({status})")
        return submission_id, False
    if latest >= settings.max_attempts:
        log(f"{submission_id} ended {status} and all {settings.max_attempts} attempts are used")
        return submission_id, False
    log(f"{submission_id} ended {status}: starting attempt {latest + 1}, resuming from the last checkpoint")
    return f"{settings.submission_prefix}-a{latest + 1}", True


def follow(api: RayJobsAPI, submission_id: str, poll_seconds: float) -> dict[str, Any]:
    printed = 0
    while True:
        job = api.job(submission_id)
        try:
            logs = api.logs(submission_id)
        except (urllib.error.URLError, OSError):
            logs = ""
        if len(logs) > printed:
            sys.stdout.write(logs[printed:])
            sys.stdout.flush()
            printed = len(logs)
        if job.get("status") in TERMINAL:
            return job
        time.sleep(poll_seconds)


def stop_release_jobs(api: RayJobsAPI, submission_prefix: str) -> int:
    """Stops the active jobs of <release>-r<any revision>-a<any attempt>; best effort."""
    release = submission_prefix.rsplit("-r", 1)[0]
    pattern = re.compile(re.escape(release) + r"-r\d+-a\d+$")
    try:
        for job in api.list_jobs():
            submission_id = job.get("submission_id") or ""
            if pattern.match(submission_id) and job.get("status") in ACTIVE:
                api.request("POST", f"/api/jobs/{submission_id}/stop")
                log(f"stopped {submission_id}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        log(f"could not stop the release's Ray jobs ({error}); the RayCluster's deletion ends them")
    return 0


def main(argv: list[str]) -> int:
    settings = Settings.from_env()
    if "--stop" in argv:
        return stop_release_jobs(RayJobsAPI(settings.dashboard_url, timeout=10), settings.submission_prefix)
    api = RayJobsAPI(settings.dashboard_url)
    wait_for_cluster(api, settings)
    if "--check" in argv:  # helm test: the Jobs API answers and Ray sees the GPUs; submit nothing.
        return 0
    submission_id, must_submit = choose_submission(api, settings)
    if must_submit:
        try:
            api.submit(submission_id, settings.job_spec)
            log(f"submitted {submission_id}")
        except urllib.error.HTTPError as error:
            # Another pod of this Job won the race: follow its submission instead of starting a second run.
            if "already exists" not in error.read().decode(errors="replace"):
                raise
            log(f"{submission_id} already exists: re-attaching")
    job = follow(api, submission_id, settings.poll_seconds)
    status = job.get("status")
    log(f"{submission_id}: status={status} driver_exit_code={job.get('driver_exit_code')} message={job.get('message')!r}")
    return 0 if status == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
