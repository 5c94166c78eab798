"""Stands in for veRL as the Ray job's driver: prints, sleeps, exits with a chosen code.

`stand_in.py SECONDS CODE`; or, as the chart's entrypoint module in the real node's image
(`python3 -m stand_in key=value ...`, the rendered veRL overrides ignored), from the Ray job's
environment: STAND_IN_SECONDS and STAND_IN_EXIT_CODE (ppo-job.runtimeEnv.env)."""

import os
import sys
import time

numbers = [word for word in sys.argv[1:] if "=" not in word]
seconds = float(numbers[0] if numbers else os.environ.get("STAND_IN_SECONDS", "1"))
code = int(numbers[1] if len(numbers) > 1 else os.environ.get("STAND_IN_EXIT_CODE", "0"))
print(f"stand-in driver: step 1 of 2, sleeping {seconds}s", flush=True)
time.sleep(seconds)
print(f"stand-in driver: done, exiting {code}", flush=True)
sys.exit(code)
