"""How `make test`'s parallel workers (pytest-xdist) share the tests: each work unit of
support.tiers.work_unit goes whole to one worker, the largest units first (xdist orders scopes by size),
so the long daemon tiers start at once and the single tests fill the workers around them.

xdist's own `--dist loadgroup` reads `xdist_group` marks by rewriting test ids, which pytest 9 no longer
lets it do (the marks are silently ignored), so the grouping is this scheduler's."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from support.tiers import work_unit


class TierScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)
