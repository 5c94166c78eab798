"""Where the project's files live, relative to the repository root, and the tool cache ($VERL_PPO_CACHE)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "verl-ppo"
CHART_VALUES = CHART / "values.yaml"
CHART_SCHEMA = CHART / "values.schema.json"
LIBRARY = "verl-ppo-lib"
VALUES_SCHEMA = ROOT / "schemas" / "values.schema.yaml"
CATALOG_SCHEMA = ROOT / "schemas" / "gpu-catalog.schema.yaml"
CATALOG = Path(__file__).resolve().parent / "catalog.yaml"
TEMPLATES = Path(__file__).resolve().parent / "templates"
VALUES_DIR = ROOT / "values"
# Platform overlays (plain files: nothing in them varies), stacked on a shape's values file.
PLATFORMS = VALUES_DIR / "platforms"
README = ROOT / "README.md"


def components() -> tuple[str, ...]:
    """The components, each a subchart of the umbrella chart (not installed alone): the umbrella's Chart.yaml
    dependencies that `<name>.enabled` switches, in its order (the one list of them; the rulebook reads it too)."""
    import yaml  # here, not above: `python3 -m generator.helm` runs on the system Python, standard library only

    return tuple(dependency["name"] for dependency in yaml.safe_load((CHART / "Chart.yaml").read_text())["dependencies"]
                 if dependency.get("condition"))


def subchart_dir(name: str) -> Path:
    return CHART / "charts" / name


def subchart_values_files() -> list[Path]:
    return [subchart_dir(name) / "values.yaml" for name in components()]


def chart_dirs() -> list[Path]:
    """The umbrella chart, then each subchart."""
    return [CHART] + [subchart_dir(name) for name in components()]


def tool_cache() -> Path:
    """Where `make setup` keeps what it builds and fetches ($VERL_PPO_CACHE)."""
    return Path(os.environ.get("VERL_PPO_CACHE", Path.home() / ".cache" / "verl-ppo"))

