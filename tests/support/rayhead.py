"""A real Ray head on CPU with logical GPUs, on free ports, stopped afterwards; or, for `make mutate`, one
head kept running across many test runs (SHARED_HEAD), its Ray jobs cleared before each."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from lab.localcluster.processes import command_line, free_port, wait_for


# The `ray` CLI through this interpreter: a console script installed by `python3 -m pip` may have no
# pyenv shim on PATH until a rehash.
RAY_CLI = [sys.executable, "-m", "ray.scripts.scripts"]


# One `ray start` at a time on this machine (parallel test workers, other checkouts' suites): a starting head
# runs a dozen Python processes importing Ray at once, and Ray gives its dashboard a fixed 20 s to register.
START_LOCK = Path(tempfile.gettempdir()) / "verl-ppo-ray-start.lock"


@contextmanager
def _one_start_at_a_time() -> Iterator[None]:
    with START_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ray_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a test's Ray node: this interpreter's directory first on PATH, so `python3` in a Ray
    job's entrypoint (the chart's preflight and stand-ins run `python3 -c` / `-m`) is one with Ray installed,
    as the Ray image's python3 is in the chart's pods (on a fresh machine the system python3 has no Ray)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "RAY_USAGE_STATS_ENABLED": "0", **(extra or {})}


def _ray_start(command: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess:
    """Runs one `ray start` (a head's or a worker's): alone on the machine, its processes before the rest."""
    with _one_start_at_a_time():
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120,
                              preexec_fn=_before_the_rest)


def _before_the_rest() -> None:
    """preexec_fn of `ray start`: its processes get the CPU before the suite's other work (root may raise
    priority; others keep theirs). Ray gives a new dashboard a fixed 20 s to register, which a 2-core
    machine rendering charts on parallel workers can otherwise miss."""
    try:
        os.nice(-10)
    except PermissionError:
        pass


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process we can read."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = command_line(int(entry.name))
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            found[int(entry.name)] = (parent, command)
    return found


def ray_dir(temp_dir: Path) -> Path:
    """The short name Ray is given for temp_dir: a link in the system temp dir. Ray puts its sockets under
    <temp dir>/session_<date>_<pid>/sockets/, and a Unix socket path holds at most 107 bytes, which a
    test's tmp_path (longer still under parallel workers: .../popen-gw1/...) can pass; Ray then fails
    with 'Module MetricsHead failed to start'. The files stay in temp_dir, where the tests read them."""
    link = Path(tempfile.gettempdir()) / f"vp-ray-{hashlib.sha1(str(temp_dir).encode()).hexdigest()[:10]}"
    if not link.is_symlink():
        temp_dir.mkdir(parents=True, exist_ok=True)  # Ray makes a missing temp dir, but not through a dangling link
        link.symlink_to(temp_dir, target_is_directory=True)
    return link


def stop_head(temp_dir: Path, gcs_port: int) -> None:
    """Stops this head's processes only (`ray stop` would end every Ray on the machine, other test runs'
    too): those naming its temp dir or GCS port, and all their descendants."""
    processes = _processes()
    short = ray_dir(temp_dir)
    marks = (f"{temp_dir}/", f"{temp_dir} ", f"{short}/", f"{short} ", f":{gcs_port} ", f":{gcs_port}\"")
    doomed = {pid for pid, (_, command) in processes.items() if any(mark in command + " " for mark in marks)}
    doomed.discard(os.getpid())
    grew = True
    while grew:
        children = {pid for pid, (parent, _) in processes.items() if parent in doomed} - doomed - {os.getpid()}
        doomed |= children
        grew = bool(children)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in doomed:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in doomed):
            time.sleep(0.2)


def _answers(url: str, headers: Mapping[str, str]) -> bool:
    with urllib.request.urlopen(urllib.request.Request(url, headers=dict(headers)), timeout=2) as response:
        json.load(response)
    return True


START_ATTEMPTS = 3
# The dashboard URL of a head started once for many test runs (`make mutate`'s Ray stage: a head's start is
# most of a short run, and on a loaded machine it fails: Ray allows its dashboard 20 s to come up).
SHARED_HEAD = "VERL_PPO_TEST_SHARED_RAY_HEAD"


@contextmanager
def ray_head(temp_dir: Path, gpus: int, extra_args: Sequence[str] = (), extra_env: Mapping[str, str] | None = None,
             metrics_port: int | None = None, gcs_port: int | None = None,
             dashboard_port: int | None = None, auth_token: str = "") -> Iterator[str]:
    """Yields the dashboard URL of a fresh head; extra_args go to `ray start`, extra_env to its processes.
    Fixed ports (gcs_port, dashboard_port) let a test start a new head where an old one was. auth_token turns on
    Ray's token authentication (RAY_AUTH_MODE=token, as KubeRay's authOptions set it on the Ray pods)."""
    auth_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": auth_token} if auth_token else {}
    env = ray_env({**(extra_env or {}), **auth_env})
    fixed_gcs_port = gcs_port
    # A port picked free can be taken before Ray binds it (busy machines, e.g. beside the local cluster):
    # a failed start is stopped and tried again on fresh ports.
    for attempt in range(1, START_ATTEMPTS + 1):
        dashboard, gcs_port = dashboard_port or free_port(), fixed_gcs_port or free_port()
        command = [
            *RAY_CLI, "start", "--head", "--disable-usage-stats", f"--port={gcs_port}",
            f"--dashboard-port={dashboard}", "--dashboard-host=127.0.0.1", "--include-dashboard=true",
            f"--ray-client-server-port={free_port()}", f"--num-gpus={gpus}", "--num-cpus=4",
            f"--temp-dir={ray_dir(temp_dir)}", f"--dashboard-agent-listen-port={free_port()}",
            f"--metrics-export-port={metrics_port or free_port()}", *extra_args,
        ]
        try:
            started = _ray_start(command, env)
            failure = "" if started.returncode == 0 else started.stdout[-3000:] + started.stderr[-3000:]
        except subprocess.TimeoutExpired:
            failure = "ray start did not return within 120 s"
        if not failure:
            break
        stop_head(temp_dir, gcs_port)  # what a failed start left running
        if attempt == START_ATTEMPTS:
            ray_dir(temp_dir).unlink()
            raise RuntimeError(f"ray start failed {attempt} times; last output:\n{failure}")
    url = f"http://127.0.0.1:{dashboard}"
    try:
        headers = {"X-Ray-Authorization": f"Bearer {auth_token}"} if auth_token else {}
        wait_for("Ray dashboard", lambda: _answers(url + "/api/version", headers), 60,
                 temp_dir / "session_latest" / "logs" / "dashboard.log", interval=0.5)
        yield url
    finally:
        stop_head(temp_dir, gcs_port)
        ray_dir(temp_dir).unlink()


def dashboard_pid(temp_dir: Path) -> int:
    """The process of this head's dashboard (its HTTP server; its modules run in child processes)."""
    return next(pid for pid, (_, command) in _processes().items()
                if "dashboard/dashboard.py" in command and f"--temp-dir={ray_dir(temp_dir)} " in command + " ")


def join_worker(temp_dir: Path, gcs_port: int, gpus: int, extra_args: Sequence[str] = ()) -> None:
    """Starts a worker node (logical GPUs) that joins the head at gcs_port on this machine; extra_args go to `ray start`
    (after the defaults: an option given again takes its value there). It names the head's GCS port on its command
    line, so the head's stop_head stops it too."""
    command = [
        *RAY_CLI, "start", f"--address=127.0.0.1:{gcs_port}", "--disable-usage-stats", f"--num-gpus={gpus}",
        "--num-cpus=1", f"--temp-dir={ray_dir(temp_dir)}", f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}", f"--dashboard-agent-listen-port={free_port()}",
        f"--metrics-export-port={free_port()}", f"--runtime-env-agent-port={free_port()}", *extra_args,
    ]
    started = _ray_start(command, ray_env())
    if started.returncode != 0:
        raise RuntimeError(f"ray start (worker) failed:\n{started.stdout[-3000:]}{started.stderr[-3000:]}")


def _call(method: str, url: str) -> object:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=30) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def clear_jobs(url: str, timeout: float = 60) -> None:
    """Stops the head's active Ray jobs and deletes every job, so submission ids can be used again."""
    deadline = time.monotonic() + timeout
    while True:
        listed = _call("GET", url + "/api/jobs/")
        active = [job for job in listed if job["status"] in ("PENDING", "RUNNING")]
        for job in listed:
            if job["status"] in ("SUCCEEDED", "FAILED", "STOPPED") and job.get("submission_id"):
                _call("DELETE", f"{url}/api/jobs/{job['submission_id']}")
        if not active:
            return
        if time.monotonic() >= deadline:
            raise RuntimeError(f"Ray jobs still active on the shared head after {timeout:g}s: {active}")
        for job in active:
            _call("POST", f"{url}/api/jobs/{job['submission_id']}/stop")
        time.sleep(0.5)


@contextmanager
def module_head(temp_dir: Path, gpus: int) -> Iterator[str]:
    """A test module's head: the shared one (its jobs cleared) where SHARED_HEAD names one, else a fresh one."""
    shared = os.environ.get(SHARED_HEAD)
    if shared:
        clear_jobs(shared)
        yield shared
        return
    with ray_head(temp_dir, gpus=gpus) as url:
        yield url
