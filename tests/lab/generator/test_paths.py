"""Tier 1: lab/versions.env read as setup.sh's bash reads it."""

from lab import pins


def test_versions_env_keeps_everything_after_the_first_equals_sign(tmp_path, monkeypatch):
    env = tmp_path / "versions.env"
    env.write_text('# comment\nA=v1.2\nB="two words"  # trailing comment\nC=x=y\n')
    monkeypatch.setattr(pins, "VERSIONS_ENV", env)
    assert pins.pinned_versions() == {"A": "v1.2", "B": "two words", "C": "x=y"}
