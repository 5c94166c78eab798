"""Stands in for veRL on the real node's Ray cluster (tier 7): the chart's entrypoint module
(`python3 -m stand_in_ranks key=value ...`, found through raycluster.pythonPath on the shared volume).

Like veRL's trainer it holds one rank (a Ray actor with all of a node's GPUs) on every GPU node and
checkpoints to trainer.default_local_dir of the rendered overrides; STAND_IN_STEPS and
STAND_IN_STEP_SECONDS (ppo-job.runtimeEnv.env) set its length, STAND_IN_RESUMED_STEP_SECONDS (where set) the
pace of an attempt that resumes. Each step every rank must answer: a lost rank (its pod deleted or evicted)
ends the run with exit code 1, as losing a rank ends veRL's."""

import os
import sys
from pathlib import Path

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from stand_in_steps import run_steps

RANK_TIMEOUT = 60  # seconds a rank may take to answer on a busy 2-core machine


@ray.remote(num_cpus=0)
class Rank:
    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


def override(name: str) -> str:
    value = next(word.split("=", 1)[1] for word in sys.argv[1:] if word.startswith(name + "="))
    return value.strip("'\"")


def place_ranks() -> list:
    nodes = [node for node in ray.nodes() if node["Alive"] and node["Resources"].get("GPU")]
    return [Rank.options(num_gpus=node["Resources"]["GPU"],
                         scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote()
            for node in nodes]


def main() -> int:
    ray.init(logging_level="ERROR")
    ranks = place_ranks()

    def every_rank_answers() -> None:
        ray.get([rank.node.remote() for rank in ranks], timeout=RANK_TIMEOUT)

    every_rank_answers()
    print(f"stand-in run: {len(ranks)} ranks placed", flush=True)
    try:
        run_steps(Path(override("trainer.default_local_dir")), int(os.environ["STAND_IN_STEPS"]),
                  float(os.environ["STAND_IN_STEP_SECONDS"]), every_rank_answers,
                  float(os.environ["STAND_IN_RESUMED_STEP_SECONDS"]) if "STAND_IN_RESUMED_STEP_SECONDS" in os.environ
                  else None)
    except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as error:
        print(f"stand-in run: a rank was lost ({type(error).__name__}): the run ends", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
