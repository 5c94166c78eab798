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
