"""The jinja2 environment for migration templates (shared by lint and the renderers).

Sandboxed, ``StrictUndefined`` (a missing variable is an error, never a blank), no HTML
escaping, no globals (only the variables passed in), the ``shq`` filter (``shlex.quote``) for
values substituted into shell commands and the ``yq`` filter for values substituted into YAML.
jinja2 is imported only when a template is rendered.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

    from upgradeplan.model import Migration


def shq(value: Any) -> str:
    """Shell-quote a value (``None`` becomes '')."""
    return shlex.quote("" if value is None else str(value))


def yq(value: Any) -> str:
    """Quote a value as a YAML scalar (a JSON string, which YAML reads as a double-quoted
    scalar), so a substituted name can never break or extend the document."""
    import json

    return json.dumps("" if value is None else str(value), ensure_ascii=False)  # non-BMP kept


def make_env() -> SandboxedEnvironment:
    """A fresh sandboxed environment with StrictUndefined and the ``shq`` filter."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shq"] = shq
    env.filters["yq"] = yq
    # no globals: jinja's `namespace`, `range`, `dict`… would silently stand in for a missing
    # param of the same name (a migration param called `namespace` is common)
    env.globals.clear()
    return env


@lru_cache(maxsize=1)
def _shared_env() -> SandboxedEnvironment:
    return make_env()


@lru_cache(maxsize=512)
def _compile(source: str) -> Template:
    return _shared_env().from_string(source)


def render_migration(migration: Migration, values: dict[str, Any]) -> str:
    """Render ``migration.template`` with ``values`` (its params and ``step``).

    Raises jinja2's ``TemplateError`` subclasses (syntax, undefined variable, sandbox).
    """
    return _compile(migration.template).render(**values)
