"""What `make mutate` mutates, and which tests each mutant of it runs: the tests that exercise that
module, narrowed to the cases that reach it (a mutant's run costs a pytest start and those cases). The
tiers that need a local cluster are left out: one start costs more than a module's whole run."""

from __future__ import annotations

from tools.mutate.python_mutants import PythonTarget

GENERATOR = "tests/test_generator.py"
SIZING = ("tests/test_sizing.py", GENERATOR, "-k", "sizing or micro or log_prob or batches or values_directory or scales")
DISCOVER_UNIT = ("tests/test_discover.py", "tests/test_cluster_discover.py", "-k",
                 "not one_entry_per_node and not values_rendered_from_discovery")
VERL = ("tests/test_verl_config.py", "-k", "not rendered_command_composes")
# `Path / "name"` replaced by another operator fails at import, in every test: nothing to learn from it.
PATH_DIVISION = (r"core/ReplaceBinaryOperator_Div_\w+$",)

PYTHON_TARGETS = (
    PythonTarget("generator/sizing.py", SIZING),
    PythonTarget("generator/quantity.py", ("tests/test_quantity.py", "tests/test_sizing.py", *DISCOVER_UNIT)),
    PythonTarget("generator/catalog.py", (GENERATOR, "tests/test_sizing.py")),
    PythonTarget("generator/discover.py", DISCOVER_UNIT),
    PythonTarget("generator/render.py", (GENERATOR, "-k", "values_directory or platform or stray or rendered_values")),
    PythonTarget("generator/schema.py", (GENERATOR, "-k", "schema")),
    PythonTarget("generator/valuesdoc.py", ("tests/test_valuesdoc.py", GENERATOR, "-k", "readme or parameter")),
    PythonTarget("generator/summary.py", ("tests/test_summary.py",)),
    PythonTarget("generator/dashboards.py", ("tests/test_dashboards.py", "tests/test_observability_chart.py", "-k",
                                             "dashboards_are or pinned")),
    PythonTarget("generator/paths.py", ("tests/test_paths.py", GENERATOR, "tests/test_verl_config.py", "-k",
                                        "readme or schema or supported or versions_env"),
                 excluded=PATH_DIVISION),
    PythonTarget("generator/verlconfig.py", VERL, 120.0),
    PythonTarget("generator/verltypes.py", VERL, 120.0),
    PythonTarget("generator/check.py", ("tests/test_bad_input.py", "-k", "generator_check or cannot_read or every_broken "
                                        "or set_forms or check_types"), 300.0),
    PythonTarget("generator/cli.py", (GENERATOR, "tests/test_bad_input.py", "-k", "not helm3"), 300.0),
    # Each run starts a real Ray head and runs Ray jobs: minutes per mutant on two cores.
    PythonTarget("charts/verl-ppo/charts/ppo-job/files/submitter.py", ("tests/test_submitter_ray.py",), 900.0),
)
