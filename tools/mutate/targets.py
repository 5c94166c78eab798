"""What `make mutate` mutates, and which tests each mutant of it runs (the tests that exercise that
module; the tiers that need a local cluster are left out: one start costs more than a module's run)."""

from __future__ import annotations

from tools.mutate.python_mutants import PythonTarget

GENERATOR_TESTS = ("tests/test_generator.py", "tests/test_sizing.py")
DISCOVER_UNIT = ("tests/test_cluster_discover.py", "-k",
                 "not one_entry_per_node and not values_rendered_from_discovery")
VERL_TESTS = ("tests/test_verl_config.py", "-k", "not rendered_command_composes")

PYTHON_TARGETS = (
    PythonTarget("generator/sizing.py", GENERATOR_TESTS),
    PythonTarget("generator/quantity.py", (*GENERATOR_TESTS[1:], *DISCOVER_UNIT)),
    PythonTarget("generator/catalog.py", GENERATOR_TESTS),
    PythonTarget("generator/discover.py", DISCOVER_UNIT),
    PythonTarget("generator/render.py", GENERATOR_TESTS),
    PythonTarget("generator/schema.py", GENERATOR_TESTS),
    PythonTarget("generator/valuesdoc.py", GENERATOR_TESTS),
    PythonTarget("generator/summary.py", ("tests/test_summary.py",)),
    PythonTarget("generator/dashboards.py", ("tests/test_observability_chart.py", "-k", "dashboards_are")),
    PythonTarget("generator/paths.py", GENERATOR_TESTS),
    PythonTarget("generator/verlconfig.py", VERL_TESTS),
    PythonTarget("generator/verltypes.py", VERL_TESTS),
    PythonTarget("generator/cli.py", ("tests/test_generator.py", "tests/test_bad_input.py")),
    # Each run starts a real Ray head and runs Ray jobs: minutes per mutant on two cores.
    PythonTarget("charts/verl-ppo/charts/ppo-job/files/submitter.py", ("tests/test_submitter_ray.py",), 900.0),
)
