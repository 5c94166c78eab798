"""What `make mutate` mutates, and which tests each mutant of it runs: the tests that exercise that
module, narrowed to the cases that reach it (a mutant's run costs a pytest start and those cases). The
tiers that need a local cluster are left out: one start costs more than a module's whole run."""

from __future__ import annotations

from lab.mutate.plan import PythonTarget, Stages

GENERATOR = "tests/generator/test_generator.py"
SIZING_TESTS = "tests/generator/test_sizing.py"
BAD_INPUT = "tests/chart/test_bad_input.py"
SUBCHARTS = "tests/chart/test_subcharts.py"
VERL_CONFIG = "tests/verl/test_verl_config.py"
# -k also matches a test's module name: every test of test_sizing.py runs, and test_generator.py's sizing cases.
SIZING = (SIZING_TESTS, GENERATOR, "-k", "sizing or micro or log_prob or batches or values_directory or scales "
          "or rollout or responses or critic")
DISCOVER_UNIT = ("tests/generator/test_discover.py", "tests/cluster/test_cluster_discover.py", "-k",
                 "not one_entry_per_node and not values_rendered_from_discovery")
# The cases that reach the type and range checks (one composition each), not the full compositions of
# every scenario (two minutes a run at load, and they only ask Hydra whether keys exist).
VERL = (VERL_CONFIG, "-k", "one_override or declared_types or wrong_type or misspelled or correct_extra "
        "or not_there or config_dir")
# generator check's paths: schema, rule lines, Helm's refusals, extraArgs, each component's use; not the 120
# bad inputs (each a helm run: minutes; the selected cases reach every branch those reach).
CHECK = (BAD_INPUT, VERL_CONFIG, SUBCHARTS, "-k",
         "not helm3 and (set_flags or every_broken or set_forms or check_types or cannot_read or "
         "generator_check_rejects_a or generator_check_rejects_an or not_there or components_use "
         "or check_findings)")
# generator check's cases of a second or so each: its findings, veRL's config, each component's use, Helm's refusals.
CHECK_FAST = (BAD_INPUT, VERL_CONFIG, SUBCHARTS, "-k",
              "not helm3 and (check_findings or generator_check_rejects_a_misspelled "
              "or generator_check_rejects_an_extra or not_there or components_use or cannot_read or set_flags)")
# The schema's words (jsonschema errors made findings): every kind of constraint broken at once (each field also
# named by Helm), the findings' own cases and the fix sentences, before the CHECK cases.
SCHEMA_WORDS = (BAD_INPUT, GENERATOR, "-k",
                "not helm3 and (check_findings or every_field or fix_sentence)")
# Helm for generator check: where it is found, its merge of the values (the forms of --set and files Helm reads
# its own way, the chart's values-only copy made once), then the CHECK cases.
HELM = (BAD_INPUT, GENERATOR, "-k",
        "not helm3 and (check_findings or cannot_read or check_types or set_forms or merged_through_one_copy or "
        "finds_helm or without_helm or one_line or no_helm)")
# `Path / "name"` replaced by another operator fails at import (paths.py) or at the first Helm run (the cached
# Helm's path in helm.py), in every test: nothing to learn from it.
PATH_DIVISION = (r"core/ReplaceBinaryOperator_Div_\w+$",)

# The submitter: its unit tests first (a second), then the Ray-head cases of the function a mutant changed.
# Left out of the slow stage: test_submitter_faults.py (a silent dashboard takes 70 s a case). KubeJob's
# answers come from a real API server only (test_cluster_submitter.py: a local cluster, minutes a start).
SUBMITTER_RAY = "tests/ray/test_submitter_ray.py"
SUBMITTER_RAYJOB = "tests/ray/test_submitter_rayjob.py"


def _ray(cases: str, *files: str) -> tuple[str, ...]:
    return (SUBMITTER_RAY, *files, "-k", cases)


SUBMITTER_STAGES = Stages(
    fast=("tests/submitter/test_submitter_unit.py", "tests/submitter/test_submitter_run_module.py"),
    slow={
        "Settings": _ray("success"),
        "Settings.from_env": _ray("success or preflight or inputs or checkpoint"),
        "Settings.family_pattern": _ray("supersedes or stop_mode_stops"),
        "RayJobsAPI": _ray("success or stopped_job or stop_mode_stops or too_few or working_dir"),
        "_find_node_records": _ray("too_few or check_mode"),
        "log": _ray("success"),
        "wait_for_cluster": _ray("too_few or check_mode or success"),
        "missing_inputs": _ray("inputs"),
        "wait_for_inputs": _ray("inputs"),
        "checkpoint_world_sizes": _ray("checkpoint"),
        "check_resumable": _ray("checkpoint"),
        "attempts_of": _ray("restarted or retry_after or success"),
        "choose_submission": _ray("restarted or retry_after or failure or success"),
        "job_status": _ray("success or failure or stopped_job"),
        "follow": _ray("success or failure or stopped_job or preflight"),
        "stop_active": _ray("supersedes or stop_mode"),
        "_retry_seconds": _ray("stop_mode"),
        "stop_release_jobs": _ray("stop_mode"),
        "KubeJob": ("tests/cluster/test_cluster_submitter.py", "-k", "sigterm_stops"),
        "raise_terminated": _ray("sigterm", SUBMITTER_RAYJOB),
        "on_terminate": _ray("sigterm", SUBMITTER_RAYJOB),
        "given_submission": (SUBMITTER_RAYJOB,),
        "preflight": _ray("preflight"),
        "submit_once": _ray("success or supersedes or restarted or preflight or kuberays or retried_pod",
                            SUBMITTER_RAYJOB),
        "run": _ray("success or failure or restarted or retry_after or stopped_job or kuberays", SUBMITTER_RAYJOB),
        "main": _ray("success or check_mode or stop_mode or sigterm"),
    },
    # Module level (constants, imports): the cases that take every main path.
    slow_default=_ray("success or failure or stopped_job or restarted or supersedes or stop_mode_stops or kuberays",
                      SUBMITTER_RAYJOB),
    shared_ray_head=True,
)

PYTHON_TARGETS = (
    PythonTarget("generator/sizing.py", SIZING),
    PythonTarget("generator/quantity.py", ("tests/generator/test_quantity.py", SIZING_TESTS, *DISCOVER_UNIT)),
    PythonTarget("generator/catalog.py", (GENERATOR, SIZING_TESTS)),
    PythonTarget("generator/discover.py", DISCOVER_UNIT),
    PythonTarget("generator/render.py", (GENERATOR, "-k", "values_directory or platform or stray or rendered_values "
                                         "or tolerations or cli_render or render_algorithm or critic_free "
                                         "or render_writes")),
    PythonTarget("generator/schema.py", (GENERATOR, "-k", "schema")),
    PythonTarget("generator/valuesdoc.py", ("tests/generator/test_valuesdoc.py", GENERATOR, "-k",
                                            "readme or parameter")),
    PythonTarget("generator/summary.py", ("tests/generator/test_summary.py",)),
    PythonTarget("generator/algorithms.py", (GENERATOR, "-k", "algorithm or critic")),
    PythonTarget("generator/verlversions.py", (GENERATOR, "-k", "algorithm or version or generated_files")),
    PythonTarget("generator/docstables.py", (GENERATOR, "-k", "generated_files or docs_table")),
    PythonTarget("lab/dashboards/ray_dashboards.py", ("tests/lab/generator/test_dashboards.py",
                                                      "tests/chart/test_observability_chart.py", "-k",
                                                      "dashboards_are or pinned or make_dashboards")),
    PythonTarget("generator/paths.py", ("tests/lab/generator/test_paths.py", GENERATOR, VERL_CONFIG, "-k",
                                        "readme or schema or component or versions_env"),
                 excluded=PATH_DIVISION),
    # Timeouts far above a run at load 12: a timeout counts as killed, so it must mean a hang.
    PythonTarget("generator/verlconfig.py", VERL, 600.0),
    PythonTarget("generator/verltypes.py", VERL, 600.0),
    PythonTarget("generator/check.py", (), 900.0, stages=Stages(fast=CHECK_FAST, slow_default=CHECK)),
    PythonTarget("generator/finding.py", (), 900.0, stages=Stages(fast=SCHEMA_WORDS, slow_default=CHECK)),
    PythonTarget("generator/schemafindings.py", (), 900.0, stages=Stages(fast=SCHEMA_WORDS, slow_default=CHECK)),
    PythonTarget("generator/helm.py", (), 900.0, stages=Stages(fast=HELM, slow_default=CHECK),
                 excluded=PATH_DIVISION),
    PythonTarget("generator/cli.py", (GENERATOR, BAD_INPUT, "tests/generator/test_summary.py",
                                      "tests/cluster/test_cluster_discover.py", "-k",
                                      "not helm3 and (cli or render_algorithm or render_names or set_flags or "
                                      "cannot_read or every_broken or summary_names or gpu_memory_gib)"), 900.0),
    # A mutant the unit tests miss starts a real Ray head and runs Ray jobs: minutes on two cores.
    PythonTarget("charts/verl-ppo/charts/ppo-job/files/submitter.py", (), 900.0, stages=SUBMITTER_STAGES),
)
STAGED = {target.module: target.stages for target in PYTHON_TARGETS if target.stages}
