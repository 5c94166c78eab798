"""Where the project's files live, relative to the repository root."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "verl-ppo"
CHART_VALUES = CHART / "values.yaml"
CHART_SCHEMA = CHART / "values.schema.json"
DASHBOARDS = CHART / "charts" / "observability" / "dashboards"
VALUES_SCHEMA = ROOT / "schemas" / "values.schema.yaml"
CATALOG_SCHEMA = ROOT / "schemas" / "gpu-catalog.schema.yaml"
CATALOG = Path(__file__).resolve().parent / "catalog.yaml"
TEMPLATES = Path(__file__).resolve().parent / "templates"
VALUES_DIR = ROOT / "values"
README = ROOT / "README.md"
