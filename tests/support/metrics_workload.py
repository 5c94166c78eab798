"""A small Ray workload that keeps the dashboards' metrics alive: tasks, a live actor, a placement group and
objects in the store. Runs until killed. Usage: python metrics_workload.py <gcs address>"""

import sys
import time

import ray
from ray.util.placement_group import placement_group


@ray.remote
def square(x: int) -> int:
    return x * x


@ray.remote
class Counter:
    def __init__(self):
        self.count = 0

    def add(self) -> int:
        self.count += 1
        return self.count


def main() -> None:
    ray.init(address=sys.argv[1])
    counter = Counter.remote()
    group = placement_group([{"CPU": 1}])
    ray.get(group.ready())
    kept = [ray.put(b"x" * 1_000_000) for _ in range(4)]
    print(f"workload running, {len(kept)} objects in the store", flush=True)
    while True:
        ray.get([square.remote(i) for i in range(8)] + [counter.add.remote()])
        time.sleep(0.5)


if __name__ == "__main__":
    main()
