"""A Ray driver with one task, for the tracing hook's tests. Usage: python traced_driver.py <gcs address>
Its workers get the driver's PYTHONPATH, so a path that hides a package hides it from them too."""

import os
import sys

import ray


@ray.remote
def traced_task(x: int) -> int:
    return x + 1


if __name__ == "__main__":
    ray.init(address=sys.argv[1], runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
    print("result", ray.get(traced_task.remote(41)), flush=True)
