"""Fleets: judge many installations in one run and roll the results up.

- :mod:`upgradeplan.fleet.members`: where the installations come from (a directory or glob of
  snapshots, ``.gz`` too; every context of a kubeconfig; GitOps trees; ``s3://`` prefixes),
  yielded one at a time so a fleet is judged streaming.
- :mod:`upgradeplan.fleet.judge`: one :func:`upgradeplan.api.check` per installation, the
  knowledge loaded once by the caller and plans shared between installations in the same
  state; the roll-up per installation and per hazard, and the fleet's exit code.
- :mod:`upgradeplan.fleet.render`: text, json, yaml, csv and markdown.
- :mod:`upgradeplan.fleet.s3`: reading and writing snapshots in object storage (the optional
  ``upgradeplan[s3]`` extra).
"""

from __future__ import annotations

from upgradeplan.fleet.judge import (
    Fleet,
    HazardHits,
    Installation,
    Judge,
    judge_fleet,
)
from upgradeplan.fleet.members import Member

__all__ = ["Fleet", "HazardHits", "Installation", "Judge", "Member", "judge_fleet"]
