"""The local cluster's pid files: `down` stops exactly the processes `up` started, and never a process that
got a recorded pid after the recorded one ended (after a reboot, say)."""

from __future__ import annotations

from pathlib import Path

from lab.localcluster import processes


def test_stop_all_stops_the_recorded_process_and_spares_a_reused_pid(tmp_path):
    process = processes.start(tmp_path, "sleeper", ["sleep", "60"])
    try:
        pid_file = tmp_path / "pids" / "sleeper"
        recorded = pid_file.read_text()
        assert processes.running(tmp_path) == {"sleeper": True}

        # The same pid, another start time: as if the pid now named some other process.
        pid_file.write_text(f"{process.pid} 1")
        assert processes.running(tmp_path) == {"sleeper": False}
        assert processes.stop_all(tmp_path, []) == ["sleeper"]
        assert process.poll() is None, "a process the pid file did not record was stopped"

        (tmp_path / "pids").mkdir(exist_ok=True)
        pid_file.write_text(recorded)
        assert processes.stop_all(tmp_path, []) == ["sleeper"]
        # Ended (stop_all reaps its child itself, so no exit status is left for Popen to read).
        assert not Path(f"/proc/{process.pid}").exists()
        assert processes.running(tmp_path) == {}
    finally:
        process.kill()
        process.wait()
