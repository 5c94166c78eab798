"""Stands in for veRL as the Ray job's driver: prints, sleeps, exits with a chosen code."""

import sys
import time

seconds, code = float(sys.argv[1]), int(sys.argv[2])
print(f"stand-in driver: step 1 of 2, sleeping {seconds}s", flush=True)
time.sleep(seconds)
print(f"stand-in driver: done, exiting {code}", flush=True)
sys.exit(code)
