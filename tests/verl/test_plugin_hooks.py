"""The places in veRL 0.9.1 and Ray that the chart's plug-ins (charts/verl-ppo/charts/ppo-job/files/verl_plugins.py)
hook into, checked in veRL's source as setup keeps it (support.verlreads.source_dir) and in the Ray the tests run:
a veRL or Ray that moves one of them fails here, not 20 minutes into a GPU run. The plug-ins run only inside veRL's
processes on a GPU machine (docs/sizing.md has their runs)."""

from __future__ import annotations

import ast
import importlib.util

import pytest
import ray

from support import verlreads
from support.tools import ROOT

PLUGINS = ROOT / "charts/verl-ppo/charts/ppo-job/files/verl_plugins.py"
VERSION = "0.9.1"


def verl_module(relative: str) -> ast.Module:
    path = verlreads.source_dir(VERSION) / "verl" / relative
    assert path.is_file(), f"{path}: run lab/scripts/setup.sh verl-source"
    return ast.parse(path.read_text(encoding="utf-8"))


def class_node(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == name)


def method(cls: ast.ClassDef, name: str) -> ast.AsyncFunctionDef | ast.FunctionDef:
    return next(node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == name)


def plugins():
    spec = importlib.util.spec_from_file_location("verl_ppo_plugins", PLUGINS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports nothing of veRL's until a plug-in is built
    return module


def test_verl_loads_the_agent_loop_manager_by_the_rendered_key():
    """main_ppo's TaskRunnerV1 (the default trainer's) takes rollout.agent.agent_loop_manager_class by its fully
    qualified name."""
    runner = class_node(verl_module("trainer/main_ppo.py"), "TaskRunnerV1")
    source = ast.unparse(method(runner, "init_agent_loop_manager"))
    assert ".get('agent_loop_manager_class')" in source and "load_class_from_fqn(" in source
    assert "agent_loop_manager_cls.create(" in source


def test_the_manager_names_its_workers_class_in_init_and_starts_them_after():
    """AgentLoopManagerTQ sets agent_loop_workers_class in __init__; create() starts the workers after __init__,
    from that attribute: the plug-in's manager sets its own after veRL's __init__."""
    tq = verl_module("trainer/ppo/v1/agent_loop_tq.py")
    manager = class_node(tq, "AgentLoopManagerTQ")
    assert "self.agent_loop_workers_class = AgentLoopWorkerTQ" in ast.unparse(method(manager, "__init__"))
    create = ast.unparse(method(manager, "create"))
    assert create.index("cls(*args, **kwargs)") < create.index("_init_agent_loop_workers()")
    base = class_node(verl_module("experimental/agent_loop/agent_loop.py"), "AgentLoopManager")
    assert "self.agent_loop_workers_class.options(" in ast.unparse(method(base, "_init_agent_loop_workers"))
    worker = class_node(tq, "AgentLoopWorkerTQ")
    assert any(ast.unparse(decorator) == "ray.remote" for decorator in worker.decorator_list)


def test_every_agent_loop_gets_its_sampling_settings_through_run_agent_loop():
    """The workers hand each agent loop its sampling settings as _run_agent_loop's first argument, and veRL's vLLM
    server passes them on to vLLM's SamplingParams whole: the one place to add an output kind."""
    worker = class_node(verl_module("experimental/agent_loop/agent_loop.py"), "AgentLoopWorker")
    run = method(worker, "_run_agent_loop")
    assert [argument.arg for argument in run.args.args[:2]] == ["self", "sampling_params"]
    assert "agent_loop.run(sampling_params" in ast.unparse(run)
    tq_calls = ast.unparse(class_node(verl_module("trainer/ppo/v1/agent_loop_tq.py"), "AgentLoopWorkerTQ"))
    assert "self._run_agent_loop(run_sampling_params" in tq_calls
    server = class_node(verl_module("workers/rollout/vllm_rollout/vllm_async_server.py"), "vLLMHttpServer")
    assert "SamplingParams(max_tokens=max_tokens, **sampling_params)" in ast.unparse(method(server, "generate"))


def test_the_plugins_find_the_class_behind_a_ray_actor_class():
    """Ray refuses a subclass of an actor class; the plug-in subclasses the class it was made from."""

    class Counter:
        def count(self) -> int:
            return 1

    actor = ray.remote(Counter)
    origin = plugins().actor_class_origin(actor)
    assert origin is Counter
    workers = plugins().final_output_workers(origin)
    assert issubclass(workers, Counter) and workers.__name__ == "FinalOutputAgentLoopWorker"
    ray.remote(workers)  # an actor class of its own, as the manager makes it


def test_the_plugins_module_names_only_what_the_chart_renders():
    module = plugins()
    assert callable(module.quick_poll_replay_buffer)
    assert "FinalOutputAgentLoopManager" in PLUGINS.read_text()
    with pytest.raises(AttributeError, match="NoSuchPlugin"):
        module.NoSuchPlugin  # noqa: B018 (the lookup is what is tried)


def test_verl_builds_the_replay_buffer_before_any_resource_pool():
    """The plug-ins pin veRL's pools from the replay buffer's factory: veRL's trainer builds the buffer in __init__, and
    its pools only in init() (_setup: the training pool, then the rollout replicas' as the server manager starts)."""
    trainer = class_node(verl_module("trainer/ppo/v1/trainer_base.py"), "PPOTrainer")
    assert "self.replay_buffer = self._build_replay_buffer()" in ast.unparse(method(trainer, "__init__"))
    assert "create_resource_pool()" not in ast.unparse(method(trainer, "__init__"))
    setup = ast.unparse(method(trainer, "_setup"))
    assert "self.resource_pool_manager.create_resource_pool()" in setup
    pools = ast.unparse(method(trainer, "_init_resource_pool_mgr"))
    assert "global_pool_id = 'global_pool'" in pools


def test_each_pool_demands_its_accelerator_type_and_is_named_as_the_plugins_match():
    """veRL's RayResourcePool keeps accelerator_type and adds it to every GPU bundle (1e-4); its pools are made with
    their names as name_prefix: the training pool global_pool, a rollout replica's rollout_pool_<rank><suffix>."""
    base = verl_module("single_controller/ray/base.py")
    pool = class_node(base, "RayResourcePool")
    assert "self.accelerator_type = accelerator_type" in ast.unparse(method(pool, "__init__"))
    assert "bundle[self.accelerator_type] = 0.0001" in ast.unparse(method(pool, "get_placement_groups"))
    manager = ast.unparse(method(class_node(base, "ResourcePoolManager"), "create_resource_pool"))
    assert "RayResourcePool(" in manager and "name_prefix=resource_pool_name" in manager
    replica = ast.unparse(verl_module("workers/rollout/replica.py"))
    assert "resource_pool_name = f'rollout_pool_{self.replica_rank}{self.name_suffix}'" in replica
    module = plugins()
    assert module.ROLLOUT_POOL.fullmatch("rollout_pool_0") and module.ROLLOUT_POOL.fullmatch("rollout_pool_12_x")
    assert not module.ROLLOUT_POOL.fullmatch("rollout_pool_reward_0")
    assert module.TRAINING_POOL.fullmatch("global_pool") and not module.TRAINING_POOL.fullmatch("reward_pool")


def test_pinned_pools_set_each_side_and_leave_the_others():
    """pinned_pools on a class made as veRL's RayResourcePool is (name_prefix, accelerator_type): the training pool and
    a rollout replica's get their side's resource, a reward pool and a pool given a type keep theirs."""

    class Pool:
        def __init__(self, process_on_nodes=None, use_gpu=True, name_prefix=None, max_colocate_count=10,
                     detached=False, accelerator_type=None) -> None:
            self.name_prefix, self.accelerator_type = name_prefix, accelerator_type

    plugins().pinned_pools(Pool, "verl_ppo_training", "verl_ppo_rollout")
    assert Pool([8], name_prefix="global_pool").accelerator_type == "verl_ppo_training"
    assert Pool([1], name_prefix="rollout_pool_3").accelerator_type == "verl_ppo_rollout"
    assert Pool([1], name_prefix="rollout_pool_reward_0").accelerator_type is None
    assert Pool([1], name_prefix="global_pool", accelerator_type="H800").accelerator_type == "H800"
