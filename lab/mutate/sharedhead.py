"""One real Ray head for all of a module's mutants (Stages.shared_ray_head): its start is most of a short
Ray-stage run, and on a loaded machine a start fails (Ray gives its dashboard 20 s). The tests' module
heads use it through SHARED_HEAD (tests/support/rayhead.py), which clears its Ray jobs before each module."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from generator.paths import ROOT
from lab.mutate.plan import PythonTarget
from lab.mutate.staged import FAST_ONLY

START_TRIES = 5
START_RETRY_SECONDS = 30


@contextlib.contextmanager
def shared_ray_head(target: PythonTarget) -> Iterator[None]:
    """Runs the block with SHARED_HEAD set to a head started for it, where the target asks for one."""
    if not (target.stages and target.stages.shared_ray_head) or os.environ.get(FAST_ONLY):
        yield
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from support.rayhead import SHARED_HEAD, ray_head
    from support.submitter_run import GPUS

    # Under /tmp: Ray's socket paths under its temp dir must stay short.
    with tempfile.TemporaryDirectory(prefix="mutate-ray-") as temp_dir, contextlib.ExitStack() as stack:
        for attempt in range(1, START_TRIES + 1):
            try:
                url = stack.enter_context(ray_head(Path(temp_dir), gpus=GPUS))
                break
            except RuntimeError as failed:
                if attempt == START_TRIES:
                    raise
                print(f"shared Ray head: start {attempt} failed ({str(failed)[:80]}...); trying again", flush=True)
                time.sleep(START_RETRY_SECONDS)
        print(f"shared Ray head for {target.module}'s Ray stage: {url}", flush=True)
        os.environ[SHARED_HEAD] = url
        try:
            yield
        finally:
            del os.environ[SHARED_HEAD]
