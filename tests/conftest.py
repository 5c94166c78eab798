import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import tools  # noqa: E402
from support.kubeschema import Validator  # noqa: E402
from support.tiers import TIERS  # noqa: E402

# generator check runs $HELM before any helm on PATH: the tests run it with the Helm 4 that setup pins.
os.environ["HELM"] = str(tools.helm_binaries()["helm4"])


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run lab/scripts/setup.sh (make setup) first")
    return path


@pytest.fixture(scope="session", params=["helm3", "helm4"])
def helm(request) -> Path:
    """Each chart test runs with Helm 3 and with Helm 4."""
    return _require(tools.helm_binaries()[request.param])


@pytest.fixture(scope="session")
def validator() -> Validator:
    crds = tools.crd_files()
    if len(crds) < 3:
        pytest.fail("CRDs missing under the tool cache: run lab/scripts/setup.sh (make setup) first")
    return Validator(_require(tools.kubernetes_openapi()), crds)


def pytest_configure(config):
    for tier, holds in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {holds} (tests/{tier}/, tests/lab/{tier}/)")


# The render cache's counts of each xdist worker, handed over when the worker ends.
WORKER_RENDER_COUNTS: list[dict[str, int]] = []


def pytest_sessionfinish(session):
    from support.rendercache import RENDERS

    if hasattr(session.config, "workeroutput"):  # an xdist worker
        session.config.workeroutput["render_counts"] = RENDERS.counts()


@pytest.hookimpl(optionalhook=True)  # an xdist hook: only called where xdist runs the session
def pytest_testnodedown(node, error):
    if "render_counts" in getattr(node, "workeroutput", {}):
        WORKER_RENDER_COUNTS.append(node.workeroutput["render_counts"])


def pytest_terminal_summary(terminalreporter):
    from support.rendercache import RENDERS, summary

    terminalreporter.write_line(summary(WORKER_RENDER_COUNTS or [RENDERS.counts()]))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: only called where xdist runs the session
def pytest_xdist_make_scheduler(config, log):
    from support.workers import TierScheduling

    return TierScheduling(config, log)


def pytest_collection_modifyitems(items):
    """Each tier folder's conftest.py marks its tests (support.tiers.mark_tier); a test that got no tier (in a folder
    without that conftest) would escape every `-m <tier>` selection, so it stops the session."""
    unmarked = sorted({item.nodeid.split("::", 1)[0] for item in items
                       if not any(item.get_closest_marker(tier) for tier in TIERS)})
    if unmarked:
        raise pytest.UsageError(f"{', '.join(unmarked)}: no tier marker: its folder needs the conftest.py of a tier "
                                "folder (`from support.tiers import mark_tier as pytest_itemcollected`)")
