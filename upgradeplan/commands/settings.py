"""The global options' settings: a plain dict on the root click context (``obj``).

Built by :func:`root_settings` from the group's options and added to by :func:`remember` for
a global option given after the command; read with :func:`setting`. Nothing here imports the
library, so ``--help`` stays light.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from upgradeplan import progress

Settings = dict[str, Any]  # the global options' values (kb_dirs, contexts, color, verbose, ...)
# kb_dirs holds the --kb / UPGRADEPLAN_KB directories, then the enabled packs' directories


def root_settings(options: Mapping[str, Any], before: Mapping[str, Any] | None = None) -> Settings:
    """The settings from the group's options (and UPGRADEPLAN_KB); ``before``: values a
    completion run stored already."""
    from upgradeplan.kb import packs

    env_dirs = [d for d in os.environ.get("UPGRADEPLAN_KB", "").split(os.pathsep) if d]
    given = tuple(options.get("packs", ()))
    enabled = tuple(dict.fromkeys((*packs.configured(), *packs.env_names(), *given)))
    obj: Settings = dict(before or {})
    obj.update(
        {
            "kb_dirs": (*env_dirs, *options.get("kb_dirs", ()), *packs.directories(enabled)),
            "packs": enabled,
            "packs_given": given,  # by --pack (a re-run's command line repeats only these)
            "kubeconfig": options.get("kubeconfig"),
            "contexts": tuple(options.get("contexts", ())),
            "namespace": options.get("namespace"),
            "request_timeout": options.get("request_timeout"),
            "color": "never" if options.get("no_color") else options.get("color") or "auto",
            "verbose": int(options.get("verbose") or 0),
            "debug": bool(options.get("debug")),
        }
    )
    return obj


def remember(obj: Settings, key: str, value: Any, *, multiple: bool, count: bool) -> None:
    """A global option given after the command: stored where the group's own would be."""
    if value in (None, False, (), 0):
        return
    if key == "no_color":
        obj["color"] = "never"
    elif key == "packs":  # --pack after the command: its directory joins the knowledge roots
        from upgradeplan.kb import packs

        new = [n for n in value if n not in obj.get("packs", ())]
        obj["kb_dirs"] = (*obj.get("kb_dirs", ()), *packs.directories(new))
        obj["packs"] = (*obj.get("packs", ()), *new)
        obj["packs_given"] = (*obj.get("packs_given", ()), *value)
    elif multiple:
        obj[key] = (*obj.get(key, ()), *value)
    elif count:
        obj[key] = int(obj.get(key) or 0) + int(value)
        progress.set_verbose(obj[key])
    else:
        obj[key] = value


def setting(obj: Mapping[str, Any] | None, key: str, default: Any = None) -> Any:
    """A global option's value, or ``default``."""
    value = (obj or {}).get(key)
    return default if value is None else value
