"""Tier 1: `generator dashboards` writes Ray's dashboards only from the pinned Ray."""

import pytest
import ray

from generator import dashboards


@pytest.mark.parametrize("installed", ["0.0.1", "99.0.0"])
def test_another_ray_than_the_pinned_one_is_refused(monkeypatch, installed):
    monkeypatch.setattr(ray, "__version__", installed)
    with pytest.raises(SystemExit, match=f"installed Ray is {installed}, requirements-test.txt pins "
                                         f"{dashboards.pinned_ray_version()}"):
        dashboards.generate()
