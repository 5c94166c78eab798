"""Local processes of the cluster: started in their own session with a log and a pid file, so a
later `down` (another Python process) can stop exactly what `up` started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(state: Path, name: str, command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """Starts command with stdout and stderr in <state>/logs/<name>.log and its pid in <state>/pids/<name>."""
    (state / "logs").mkdir(parents=True, exist_ok=True)
    (state / "pids").mkdir(parents=True, exist_ok=True)
    with open(state / "logs" / f"{name}.log", "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, **(env or {})}, start_new_session=True)
    (state / "pids" / name).write_text(f"{process.pid} {_started_at(process.pid)}")
    return process


def _started_at(pid: int) -> str:
    """When the process started (/proc/<pid>/stat field 22, clock ticks after boot), "" when it is gone.
    With the pid it names one process: a pid alone may belong to another one after a reboot."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _recorded(pid_file: Path) -> int | None:
    """The pid in pid_file while the process it recorded still runs; None once that one is gone."""
    pid, _, started = pid_file.read_text().partition(" ")
    return int(pid) if _alive(int(pid)) and _started_at(int(pid)) == started else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0): reap it when it is one.
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        return waited == 0
    except ChildProcessError:
        return True


def stop_pid(pid: int, grace: float = 10.0) -> None:
    """SIGTERM to the process's group (it leads one: start_new_session), SIGKILL after grace seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.1)


def kill(pid: int) -> None:
    """SIGKILL to one process, which may be gone already."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_all(state: Path, order: list[str]) -> list[str]:
    """Stops the processes with pid files under state, those named in order first (in that order)."""
    pid_dir = state / "pids"
    if not pid_dir.is_dir():
        return []
    names = [name for name in order if (pid_dir / name).exists()]
    return stop_named(state, names + sorted(path.name for path in pid_dir.iterdir() if path.name not in names))


def stop_named(state: Path, names: list[str]) -> list[str]:
    """Stops, in order, those of the named processes that have pid files under state; returns their names."""
    stopped = []
    for name in names:
        if (state / "pids" / name).exists():
            stop_one(state, name)
            stopped.append(name)
    return stopped


def pids(state: Path) -> dict[str, int]:
    """The running processes started under state, by name."""
    pid_dir = state / "pids"
    found = {path.name: _recorded(path) for path in sorted(pid_dir.iterdir())} if pid_dir.is_dir() else {}
    return {name: pid for name, pid in found.items() if pid}


def command_line(pid: int) -> str:
    """The process's command line, its arguments joined by spaces ("" once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pids_with_argument(word: str) -> list[int]:
    """Processes of this machine with word as one of their command-line arguments."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if word.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def run_quietly(command: list[str], env: dict[str, str], timeout: float = 60) -> int:
    """Runs a cleanup command, its output dropped; its exit status (or -1 when it would not run)."""
    try:
        return subprocess.run(command, env=env, capture_output=True, timeout=timeout).returncode
    except (OSError, subprocess.TimeoutExpired):
        return -1


def stop_one(state: Path, name: str) -> None:
    """Stops the process started as name (if it still runs) and forgets its pid file."""
    pid_file = state / "pids" / name
    if not pid_file.exists():
        return
    pid = _recorded(pid_file)
    if pid:
        stop_pid(pid)
    pid_file.unlink()


def restart(state: Path, name: str, down_seconds: float = 0.0) -> subprocess.Popen:
    """Stops the process started as name and, down_seconds later, starts its command line again (the same
    flags and ports; the environment is this process's, as at the first start)."""
    pid = _recorded(state / "pids" / name)
    if pid is None:
        raise RuntimeError(f"{name} is not running under {state}")
    command = [word.decode() for word in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]]
    stop_one(state, name)
    time.sleep(down_seconds)
    return start(state, name, command)


def running(state: Path) -> dict[str, bool]:
    pid_dir = state / "pids"
    if not pid_dir.is_dir():
        return {}
    return {path.name: _recorded(path) is not None for path in sorted(pid_dir.iterdir())}


def wait_for(what: str, ready: Callable[[], bool], timeout: float, log: Path | None = None,
             interval: float = 0.25) -> float:
    """Polls ready() until it is true and returns the seconds that took; on timeout raises
    TimeoutError with the tail of log (the part's log, where one is given)."""
    started = time.monotonic()
    deadline = started + timeout
    while time.monotonic() < deadline:
        try:
            if ready():
                return time.monotonic() - started
        except Exception:  # noqa: BLE001 - a part that is still starting answers with errors of any kind
            pass
        time.sleep(interval)
    tail = ""
    if log and log.exists():
        tail = "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    raise TimeoutError(f"{what} not ready after {timeout:.0f}s{tail}")
