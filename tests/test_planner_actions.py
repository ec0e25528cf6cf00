"""planner.actions: a plan's actions render their migration when first read, to the same text."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from upgradeplan import api
from upgradeplan.model import Action, KnowledgeBase
from upgradeplan.planner.actions import _render
from upgradeplan.readers.stated import from_flags


def _actions(kb: KnowledgeBase) -> list[Action]:
    state = from_flags(
        kb,
        ["agent-platform=4.8.0"],
        ["agent-platform-connectivity=4.8.0"],
        [
            "helmrelease.kagent.drift-detection=disabled",
            "helmrelease.kagent.namespace=flux-giantswarm",
            "object.Harness.kagent.kagent.exists=false",
            "kubernetes=1.35.0",
        ],
    )  # reference scenario 4: its plan turns drift detection on first
    plan = api.plan(kb, state, ["agent-platform=4.8.1"]).plan
    assert plan is not None
    return [a for step in plan.steps for a in step.actions]


def test_content_is_rendered_on_first_read_to_the_eager_text(kb: KnowledgeBase) -> None:
    actions = _actions(kb)
    assert actions
    for a in actions:
        assert "content" not in vars(a)  # not rendered while planning
        eager = _render(kb.migrations[a.migration], vars(a)["_render"].args[1])
        kept = pickle.loads(pickle.dumps(a))  # a deferred action pickles (fleet workers)
        refixed = a.with_fixes((*a.fixes, "another"))
        assert "content" not in vars(refixed)
        assert a.content == eager and kept.content == eager and refixed.content == eager
        same = Action(
            a.migration, a.title, a.kind, a.when, eager, a.target, a.fixes, a.placeholders
        )
        assert same == a and repr(same) == repr(a)


def test_an_offline_check_does_not_import_jinja2(tmp_path: object) -> None:
    code = (
        "import sys\n"
        "from upgradeplan.cli import run\n"
        "run(['check', '--to', 'agent-platform=4.8.0', '--installed', 'agent-platform=4.7.18',"
        " '--pin', 'agent-platform-connectivity=4.7.18', '--fact', 'kubernetes=1.35.0'])\n"
        "print('jinja2' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.stderr.strip().splitlines()[-1] == "False"
    assert "Recommended path" in proc.stdout
