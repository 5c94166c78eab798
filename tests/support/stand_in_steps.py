"""Stands in for a veRL run that checkpoints: resumes after the newest checkpoint, as resume_mode=auto does.

`stand_in_steps.py CHECKPOINT_DIR STEPS STEP_SECONDS`: reads veRL's tracker file
(latest_checkpointed_iteration.txt), starts at the step after it, and for each step sleeps, writes
global_step_N/ and the tracker, appends "N <pid>@<host>" to CHECKPOINT_DIR/journal (the test reads which
process, in which pod, wrote which step) and prints the step. Exits 0 after step STEPS."""

import os
import socket
import sys
import time
from pathlib import Path
from typing import Callable


def run_steps(checkpoints: Path, steps: int, pace: float, before_checkpoint: Callable[[], None] = lambda: None,
              resumed_pace: float | None = None) -> None:
    """The steps after the last checkpoint; before_checkpoint runs in each step (it raises to end the run). A run
    that resumes steps at resumed_pace where given (the pace of a run that is struck matters, not of its rest)."""
    tracker = checkpoints / "latest_checkpointed_iteration.txt"
    checkpoints.mkdir(parents=True, exist_ok=True)
    first = int(tracker.read_text()) + 1 if tracker.exists() else 1
    if first > 1 and resumed_pace is not None:
        pace = resumed_pace
    writer = f"{os.getpid()}@{socket.gethostname()}"  # pids repeat across pods: the host names the pod
    print(f"stand-in run: {'resuming' if first > 1 else 'starting'} at step {first} of {steps}", flush=True)
    for step in range(first, steps + 1):
        time.sleep(pace)
        before_checkpoint()
        (checkpoints / f"global_step_{step}").mkdir()  # exists already: a step written twice fails the run
        tracker.write_text(str(step))
        with open(checkpoints / "journal", "a", encoding="utf-8") as journal:
            journal.write(f"{step} {writer}\n")
        print(f"stand-in run: step {step} checkpointed", flush=True)
    print("stand-in run: done", flush=True)


def read_journal(checkpoints: Path) -> list[tuple[int, str]]:
    """(step, writer) for every checkpoint written, in order; the writer is "<pid>@<host>"."""
    path = checkpoints / "journal"
    lines = path.read_text().split() if path.exists() else []
    # A journal read mid-write may end in a step without its writer yet: that step is not counted.
    return [(int(step), writer) for step, writer in zip(lines[::2], lines[1::2], strict=False)]


def wait_for_step(checkpoints: Path, step: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(number >= step for number, _ in read_journal(checkpoints)):
            return
        time.sleep(0.2)
    raise AssertionError(f"no checkpoint {step} within {timeout}s: {read_journal(checkpoints)}")


if __name__ == "__main__":
    run_steps(Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
