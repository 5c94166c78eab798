"""Running the chart's submitter program as its Job would, against a real Ray head (tiers 4 and 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBMITTER = ROOT / "charts" / "verl-ppo" / "charts" / "ppo-job" / "files" / "submitter.py"
PREPARE = SUBMITTER.with_name("prepare.py")
STAND_IN = Path(__file__).resolve().parent / "stand_in.py"
GPUS = 4


def jobs(dashboard: str, prefix: str) -> list[dict]:
    with urllib.request.urlopen(dashboard + "/api/jobs/", timeout=10) as response:
        return [j for j in json.load(response) if (j.get("submission_id") or "").startswith(prefix + "-a")]


def submitter_env(dashboard: str, spec: Path, prefix: str, **settings: str) -> dict[str, str]:
    family = prefix.rsplit("-", 1)[0]
    env = {**os.environ, "RAY_DASHBOARD_URL": dashboard, "VERL_PPO_JOB_SPEC": str(spec),
           "VERL_PPO_SUBMISSION_FAMILY": family, "VERL_PPO_SUBMISSION_PREFIX": prefix,
           "VERL_PPO_EXPECTED_GPUS": str(GPUS), "VERL_PPO_POLL_SECONDS": "0.5"}
    env.update({f"VERL_PPO_{key.upper()}": value for key, value in settings.items()})
    return env


def write_spec(tmp_path: Path, name: str, seconds: float = 1.0, code: int = 0, runtime_env: dict | None = None,
               driver: Path = STAND_IN) -> Path:
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps({"entrypoint": f"{sys.executable} {driver} {seconds} {code}",
                                "runtime_env": runtime_env or {"env_vars": {"TORCH_NCCL_AVOID_RECORD_STREAMS": "1"}},
                                "metadata": {"release": "test"}}))
    return spec


def start_submitter(dashboard, tmp_path, prefix, seconds=1.0, code=0, expected_gpus=GPUS, timeout=60,
                    attempts=3, runtime_env=None, driver=STAND_IN, *args: str, **settings: str) -> subprocess.Popen:
    spec = write_spec(tmp_path, prefix, seconds, code, runtime_env, driver)
    env = submitter_env(dashboard, spec, prefix, expected_gpus=str(expected_gpus), wait_timeout_seconds=str(timeout),
                        max_attempts=str(attempts), **settings)
    return subprocess.Popen([sys.executable, str(SUBMITTER), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen) -> tuple[int, str]:
    try:
        output, _ = process.communicate(timeout=180)
    finally:
        stop(process)
    return process.returncode, output


def stop(process: subprocess.Popen) -> None:
    """Kills a submitter a test leaves behind (on failure, or one still running after 180 s)."""
    if process.poll() is None:
        process.kill()
        process.communicate()


def wait_for_status(dashboard, prefix, status, timeout=60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [j for j in jobs(dashboard, prefix) if j["status"] == status]
        if found:
            return found[0]
        time.sleep(0.3)
    raise AssertionError(f"no {status} job for {prefix}: {jobs(dashboard, prefix)}")
