"""The layout holds: the dependency rule of docs/architecture.md against the package's imports,
no import cycle between modules, no patched interpreter internals or code made at run time,
one record system (msgspec Structs) and no module over 600 lines.

For the dependency rule every ``import`` in every module counts, the ones inside functions
too (they run the moment the function does); imports under ``if TYPE_CHECKING:`` do not (they
never run). For cycles every import counts, those under ``if TYPE_CHECKING:`` too.
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
    "filekind": 0,  # what a parsed input file looks like, for wrong-kind messages
    "keypath": 0,
    "progress": 0,  # what the CLI tells on stderr while a reader reads (installed by the CLI)
    "suggest": 0,  # did-you-mean by edit distance
    "linear": 0,  # regular expressions on RE2 (symptom patterns: diagnose and kb lint)
    "releases": 0,
    "results": 0,
    "kb.templating": 0,  # the sandboxed template environment
    "state.keys": 0,  # the fact-key vocabulary (docs/state-format.md)
    "yamlload": 0,  # every YAML read: the C loader, bounded, with line numbers
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
    # checks computed from two chart archives (fetched through the readers' transport)
    "charts": 3,
    # after diagnose matched: rank by a state (the planner's scopes), fill placeholders
    "triage": 3,
    # renderings
    "render": 4,
    # composition
    "fleet": 5,  # one check per installation, through the planner as api.check does
    "api": 6,
    "renovate": 7,  # Renovate's rules: one plan per pin, through api
    # the face
    "commands": 8,
    "cli": 9,
    "commands.clidoc": 10,  # the docs tool: writes docs/cli-reference.md from the CLI itself
    "__main__": 10,
}

# Imports that break the rule today, each with its reason. The list can only shrink: an entry
# that no longer occurs fails the test too, so it is removed when it is fixed.
KNOWN: dict[tuple[str, str], str] = {}

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


def _imports(
    tree: ast.AST, *, top_level_only: bool = False, type_checking: bool = False
) -> Iterator[str]:
    """Dotted names of upgradeplan modules imported (``from upgradeplan import x`` -> x);
    with ``type_checking``, those under ``if TYPE_CHECKING:`` too."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _type_checking(node) and not type_checking:
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


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere (in functions, under
    TYPE_CHECKING); a module importing its own package's ``__init__`` is left out."""
    modules = _sources()
    graph = {
        m: {t for n in _imports(tree, type_checking=True) if (t := _existing(n, modules))} - {m}
        for m, tree in modules.items()
    }
    return {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_import_cycle() -> None:
    """No two modules import each other, directly or round about, wherever the import sits."""
    cycles = [sorted(c) for c in _cycles(_import_graph())]
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_sees_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [{"a", "b", "c"}]


# What the package must not do (issue 29): patch the interpreter's private parts, make code at
# run time, keep its own caches of compiled code, control the garbage collector, end the
# process without its teardown, or speak HTTP/1.x itself (http.client does).
FORBIDDEN = {
    "re._compiler": re.compile(r"\bre\._compiler\b"),
    "_sre": re.compile(r"\b_sre\b"),
    "re._cache": re.compile(r"\bre\._cache\b"),
    "atexit._run_exitfuncs": re.compile(r"\batexit\._run_exitfuncs\b"),
    "os._exit": re.compile(r"\bos\._exit\b"),
    "marshal": re.compile(r"\bmarshal\b"),
    "gc.freeze": re.compile(r"\bgc\.freeze\b"),
    "gc.disable": re.compile(r"\bgc\.disable\b"),
    "exec(": re.compile(r"(?<![.\w])exec\("),
    "compile(": re.compile(r"(?<![.\w])compile\("),
    "HTTP status line": re.compile(r"""["']HTTP/|HTTP/1\.[01]["']"""),
    "chunked transfer": re.compile(r"""(?i)transfer-encoding|["']chunked["']"""),
}


def test_no_interpreter_internals_or_run_time_code() -> None:
    hits = [
        f"{path.relative_to(PACKAGE)}:{n}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for name, pattern in FORBIDDEN.items()
        if pattern.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_the_forbidden_patterns_match_what_they_name() -> None:
    samples = {
        "re._compiler": "re._compiler.compile = mine",
        "_sre": "import _sre",
        "re._cache": "cache = re._cache",
        "atexit._run_exitfuncs": "atexit._run_exitfuncs()",
        "os._exit": "os._exit(code)",
        "marshal": "import marshal",
        "gc.freeze": "gc.freeze()",
        "gc.disable": "gc.disable()",
        "exec(": "exec(source, namespace)",
        "compile(": "code = compile(text, '<x>', 'exec')",
        "HTTP status line": 'if not parts[0].startswith("HTTP/"):',
        "chunked transfer": 'headers.get("transfer-encoding")',
    }
    assert samples.keys() == FORBIDDEN.keys()
    for name, line in samples.items():
        assert FORBIDDEN[name].search(line), name
    fine_lines = ("re.compile(r'x')", "self._exec(plan)", "pool.imap(f, xs, chunksize=8)")
    for fine in fine_lines:
        assert not any(p.search(fine) for p in FORBIDDEN.values()), fine


def test_one_record_system() -> None:
    """Records are msgspec Structs (docs/architecture.md, "Records"): no module imports
    dataclasses (inside functions too) or defines a NamedTuple."""
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.ClassDef):
                names = [ast.unparse(b) for b in node.bases]
            if isinstance(node, ast.stmt) and any(
                n == "dataclasses" or n.endswith("NamedTuple") for n in names
            ):
                hits.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not hits, hits


def test_no_module_is_over_600_lines() -> None:
    lines = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    over = {p for p, n in lines.items() if n > LINE_LIMIT}
    assert over <= LONG, f"over {LINE_LIMIT} lines: {sorted(over - LONG)}"
    assert over >= LONG, f"now under {LINE_LIMIT} lines, remove from LONG: {sorted(LONG - over)}"


# The modules whose job is YAML (issue 29): reading it (the C loader, bounded, with lines),
# the GitOps reader's text-to-documents step, and the comment-keeping in-place editor.
# What those modules make (LineDict, the GitOps Doc/View model, the edit records) lives apart.
YAML_MODULES = ("yamlload.py", "readers/gitops/yamldocs.py", "patches/yamledit.py")
YAML_LINES = 700


def test_the_yaml_modules_stay_under_700_lines() -> None:
    lines = {m: len((PACKAGE / m).read_text(encoding="utf-8").splitlines()) for m in YAML_MODULES}
    assert sum(lines.values()) < YAML_LINES, lines


# Imports of the package's own modules inside functions (issue 29: "function-local imports
# only for heavy optional dependencies"), outside planner/ (its own branch owns its imports).
# What stays lazy keeps an offline ``check`` and ``--help`` from importing what they never
# use; each entry: the module, how many, why. The list can only shrink.
LOCAL_IMPORTS: dict[str, tuple[int, str]] = {
    # one function per verb: a verb imports its reader, planner part or renderer when called
    # (the kube transport, the GitOps reader, patches with ruamel, fleets with
    # multiprocessing, diagnose with RE2 are not on an offline check's path)
    "upgradeplan.api": (13, "the verbs' heavy readers and parts, imported when called"),
    # one reader per kind of input, imported when that input is given
    "upgradeplan.readers.gather": (6, "the snapshot, GitOps and cluster readers"),
    # the renderer of the -o format asked for (text is at the top); the chart-archive checks
    # (HTTP fetches, tar) when they are asked for
    "upgradeplan.commands.judging": (6, "json/yaml, pr-comment, sarif, github; chart checks"),
    "upgradeplan.commands.gate": (3, "the sarif, github and json/yaml renderers"),
    # shell completion loads the knowledge only when the shell asks (not for --help)
    "upgradeplan.commands.complete": (3, "the knowledge and the packs, for completion only"),
    # the root settings read the packs when a command runs, not for --help
    "upgradeplan.commands.settings": (2, "the packs, when a command runs"),
}


def _own_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").startswith("upgradeplan")
    return isinstance(node, ast.Import) and any(
        a.name.startswith("upgradeplan") for a in node.names
    )


def _local_imports() -> dict[str, int]:
    """Module -> imports of the package's own modules inside its functions."""
    counts: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        if module.startswith("upgradeplan.planner"):
            continue
        stack: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text(encoding="utf-8")), False)]
        while stack:
            node, inside = stack.pop()
            if inside and _own_import(node):
                counts[module] = counts.get(module, 0) + 1
            inside = inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    return counts


def test_own_modules_are_imported_at_the_top() -> None:
    counts = _local_imports()
    over = {m: n for m, n in counts.items() if n > LOCAL_IMPORTS.get(m, (0, ""))[0]}
    assert not over, f"import these at the module's top (or say why not in LOCAL_IMPORTS): {over}"
    fewer = {m: counts.get(m, 0) for m, (n, _) in LOCAL_IMPORTS.items() if counts.get(m, 0) < n}
    assert not fewer, f"fewer now, lower LOCAL_IMPORTS: {fewer}"


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


def _console_scripts() -> set[str]:
    """The functions ``[project.scripts]`` of pyproject.toml names (``module:function``)."""
    import tomllib

    doc = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return {target.split(":", 1)[1] for target in doc["project"]["scripts"].values()}


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
    used |= _console_scripts()  # what pyproject.toml's [project.scripts] installs
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
