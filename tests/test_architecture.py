"""The layout holds: the dependency rule of docs/architecture.md against the package's imports,
no import cycle at import time, and no module over 600 lines.

Every ``import`` in every module counts, the ones inside functions too (they run the moment
the function does); imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "upgradeplan"

# docs/architecture.md, "Dependency rule": a module may import its own package and any lower
# layer (the vocabulary modules also each other). Vocabulary at the bottom; the face at the top.
LAYERS: dict[str, int] = {
    # the vocabulary: imports nothing above it
    "upgradeplan": 0,  # __version__
    "errors": 0,
    "versions": 0,
    "model": 0,
    "provenance": 0,
    "unreadable": 0,
    "redact": 0,
    "escape": 0,  # values made safe for shell, YAML and Markdown; control characters refused
    "keypath": 0,
    "progress": 0,  # what the CLI tells on stderr while a reader reads (installed by the CLI)
    "suggest": 0,  # did-you-mean by edit distance
    "linear": 0,  # regular expressions on RE2 (symptom patterns: diagnose and kb lint)
    "releases": 0,
    "results": 0,
    "kb.templating": 0,  # the sandboxed template environment
    "state.keys": 0,  # the fact-key vocabulary (docs/state-format.md)
    # the one fast C YAML loader (snapshots, GitOps files and the knowledge parse with it)
    "readers.yamldata": 0,
    # inputs and the state vocabulary
    "kb": 1,
    "state": 1,
    "conditions": 1,
    "pasted": 1,  # pasted text read as messages (diagnose's input)
    # what reads an installation, what plans, what edits
    "readers": 2,
    "planner": 2,
    "patches": 2,
    "symptoms": 2,
    # accepted risks: read from their file, applied to a check's findings (uses the judge)
    "accept": 3,
    # after diagnose matched: rank by a state (the planner's scopes), fill placeholders
    "triage": 3,
    # renderings
    "render": 4,
    # composition
    "api": 5,
    "fleet": 6,
    "renovate": 6,  # Renovate's rules: one plan per pin, through api
    # the face
    "commands": 7,
    "cli": 8,
    "commands.clidoc": 9,  # the docs tool: writes docs/cli-reference.md from the CLI itself
    "__main__": 9,
}

# Imports that break the rule today, each with its reason. The list can only shrink: an entry
# that no longer occurs fails the test too, so it is removed when it is fixed.
KNOWN: dict[tuple[str, str], str] = {
    ("api", "fleet"): "api.fleet delegates to fleet.judge, which judges each member through api",
}

LINE_LIMIT = 600
# Modules over the limit today (others are splitting them); the list can only shrink.
LONG: set[str] = set()


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["upgradeplan", *parts])


def _layer(module: str) -> str:
    """The entry of LAYERS a module belongs to (the longest dotted prefix)."""
    parts = module.split(".")[1:]
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in LAYERS:
            return key
    return "upgradeplan"


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST, *, top_level_only: bool = False) -> Iterator[str]:
    """Dotted names of upgradeplan modules imported (``from upgradeplan import x`` -> x)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _type_checking(node):
            continue
        if top_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("upgradeplan"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "upgradeplan":
                yield from (f"upgradeplan.{a.name}" for a in node.names)
            elif node.module.startswith("upgradeplan."):
                yield from (f"{node.module}.{a.name}" for a in node.names)
        stack.extend(ast.iter_child_nodes(node))


def _sources() -> dict[str, ast.AST]:
    return {_module(p): ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}


def _existing(name: str, modules: dict[str, ast.AST]) -> str | None:
    """``name`` as a module of the package (``upgradeplan.x.y`` may name a function of x)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in _sources() if _layer(m) == "upgradeplan" and m != "upgradeplan"]
    assert not unplaced, f"add these to LAYERS (and docs/architecture.md): {unplaced}"


def test_the_dependency_rule_holds() -> None:
    modules = _sources()
    seen: set[tuple[str, str]] = set()
    broken: list[str] = []
    for module, tree in sorted(modules.items()):
        for name in _imports(tree):
            target = _existing(name, modules)
            if target is None:
                continue
            a, b = _layer(module), _layer(target)
            if a == b or (a.split(".")[0] == b.split(".")[0] and LAYERS[b] <= LAYERS[a]):
                continue
            if LAYERS[b] < LAYERS[a] or LAYERS[a] == LAYERS[b] == 0:
                continue
            if (a, b) in KNOWN:
                seen.add((a, b))
                continue
            broken.append(f"{module} imports {target} ({a} is below {b})")
    assert not broken, "\n".join(broken)
    assert seen == set(KNOWN), f"fixed, remove from KNOWN: {sorted(set(KNOWN) - seen)}"


def test_no_import_cycle_at_import_time() -> None:
    modules = _sources()
    graph = {
        m: {t for n in _imports(tree, top_level_only=True) if (t := _existing(n, modules))} - {m}
        for m, tree in modules.items()
    }
    # a package's __init__ importing its own sub-modules is not a cycle of the layout
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        trail.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return [*trail[trail.index(t) :], t]
            if t not in state and (found := visit(t)):
                return found
        trail.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            cycle = visit(m)
            assert cycle is None, " -> ".join(cycle)


def test_no_module_is_over_600_lines() -> None:
    lines = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    over = {p for p, n in lines.items() if n > LINE_LIMIT}
    assert over <= LONG, f"over {LINE_LIMIT} lines: {sorted(over - LONG)}"
    assert over >= LONG, f"now under {LINE_LIMIT} lines, remove from LONG: {sorted(LONG - over)}"


def test_the_documented_tree_is_the_package() -> None:
    from support.tree import tree

    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = doc.index("```\nupgradeplan/\n") + len("```\n")
    shown = doc[start : doc.index("```", start)]
    assert shown == tree(PACKAGE), "docs/architecture.md: paste `python tests/support/tree.py`"


def test_api_is_composition_only() -> None:
    """api.py stays small: under 300 lines, no function over 30 (the rules live below it)."""
    path = PACKAGE / "api.py"
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) < 300
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.end_lineno is not None
        if node.end_lineno - node.lineno + 1 > 30
    ]
    assert not long, long


def test_commands_import_neither_the_planner_nor_the_readers() -> None:
    """The face works through api: no command module imports planner or readers directly."""
    modules = _sources()
    direct = [
        f"{module} imports {name}"
        for module, tree in sorted(modules.items())
        if module.startswith(("upgradeplan.commands", "upgradeplan.cli"))
        for name in _imports(tree)
        if name.startswith(("upgradeplan.planner", "upgradeplan.readers"))
    ]
    assert not direct, direct


# Code nothing in the package uses (only tests, or nobody), each with its owner's reason.
# The list can only shrink: remove an entry when its code is deleted or gets a caller.
UNUSED: dict[str, str] = {
    "readers/gitops/flux.py:SOURCE_GROUP": "gitops: unused constant",
    "readers/gitops/render.py:_is_kustomization": "gitops: no caller (render.py is being split)",
    "readers/kube/kubeconfig.py:EXEC_FIELDS": "reliability: unused constant",
    "readers/kube/objects.py:flatten_documents": "reliability: only tests call it",
    "readers/kube/objects.py:is_kubernetes_document": "reliability: no caller",
}


def _definitions(tree: ast.Module) -> Iterator[str]:
    """Module-level functions (not click commands), classes and UPPER_CASE constants."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.decorator_list:
            yield node.name
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        yield from (t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())


def _uses(tree: ast.Module) -> Iterator[str]:
    """Names read, attributes, names imported, and words in strings that are not docstrings
    or ``__all__`` (the lazy command table names modules and functions in strings)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.ImportFrom):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from re.findall(r"\w+", node.value)


def test_no_code_only_tests_use() -> None:
    """Every module-level function, class and constant has a user in the package (api's
    functions are the library's surface). Code only tests need lives under tests/support/."""
    trees = {
        str(p.relative_to(PACKAGE)): ast.parse(p.read_text(encoding="utf-8"))
        for p in PACKAGE.rglob("*.py")
    }
    used = {name for tree in trees.values() for name in _uses(tree)}
    unused = {
        f"{path}:{name}"
        for path, tree in trees.items()
        if path != "api.py"
        for name in _definitions(tree)
        if not name.startswith("__") and name not in used
    }
    assert unused <= set(UNUSED), f"nothing in the package uses: {sorted(unused - set(UNUSED))}"
    assert unused >= set(UNUSED), (
        f"used or gone, remove from UNUSED: {sorted(set(UNUSED) - unused)}"
    )
