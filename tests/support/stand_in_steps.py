"""Stands in for a veRL run that checkpoints: resumes after the newest checkpoint, as resume_mode=auto does.

`stand_in_steps.py CHECKPOINT_DIR STEPS STEP_SECONDS`: reads veRL's tracker file
(latest_checkpointed_iteration.txt), starts at the step after it, and for each step sleeps, writes
global_step_N/ and the tracker, appends "N <pid>" to CHECKPOINT_DIR/journal (the test reads which
process wrote which step) and prints the step. Exits 0 after step STEPS."""

import os
import sys
import time
from pathlib import Path

checkpoints, steps, pace = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
tracker = checkpoints / "latest_checkpointed_iteration.txt"
checkpoints.mkdir(parents=True, exist_ok=True)
first = int(tracker.read_text()) + 1 if tracker.exists() else 1
print(f"stand-in run: {'resuming' if first > 1 else 'starting'} at step {first} of {steps}", flush=True)
for step in range(first, steps + 1):
    time.sleep(pace)
    (checkpoints / f"global_step_{step}").mkdir()  # exists already: a step written twice fails the run
    tracker.write_text(str(step))
    with open(checkpoints / "journal", "a", encoding="utf-8") as journal:
        journal.write(f"{step} {os.getpid()}\n")
    print(f"stand-in run: step {step} checkpointed", flush=True)
print("stand-in run: done", flush=True)
