"""Wrong types at every field the readers act on: exit 2 naming the object and the field.

Property-based over :data:`upgradeplan.readers.kube.shapes.SHAPES`: for each kind and each
field path, an object of that kind (from the cluster fixtures, or a minimal one) gets a value
of a wrong type at that field (the lists and maps on the way made as needed); reading it as a
snapshot must raise BadInput naming that field, never anything else. A value of the right
type, or none, is read as before.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import fixture_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from upgradeplan.cli import cli
from upgradeplan.errors import BadInput
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers import snapshot
from upgradeplan.readers.kube.shapes import SHAPES, shape_problem, shown


def _fixture_objects() -> dict[str, dict[str, Any]]:
    """One object of each kind the cluster fixtures hold (the first met)."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("s1", "s6", "s8"):
        doc = yaml.safe_load(fixture_path("cluster", name, "objects.yaml").read_text())
        for item in doc["items"]:
            out.setdefault(item["kind"], item)
    return out


MINIMAL: dict[str, dict[str, Any]] = {
    "HelmChart": {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart"},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet"},
    "DaemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet"},
    "PersistentVolumeClaim": {"apiVersion": "v1", "kind": "PersistentVolumeClaim"},
    "Secret": {"apiVersion": "v1", "kind": "Secret"},
}
OBJECTS = {**MINIMAL, **_fixture_objects()}
CASES = [(kind, path, shape) for kind, fields in SHAPES.items() for path, shape in fields]


def _base(kind: str) -> dict[str, Any]:
    obj = copy.deepcopy(OBJECTS[kind])
    obj.setdefault("metadata", {"name": "x", "namespace": "ns"})
    return obj


def _put(obj: dict[str, Any], parts: list[str], value: Any) -> tuple[str | int, ...]:
    """Set ``value`` at ``parts`` (``*``: the first entry, made when missing); its path."""
    node: Any = obj
    at: list[str | int] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt = parts[i + 1] if not last else ""
        fresh: Any = [] if nxt == "*" else {}
        if part == "*":
            if not isinstance(node, list) or not node:
                raise AssertionError("a list is made before its entries")
            if last:
                node[0] = value
            at.append(0)
            node = node[0]
            continue
        if last:
            node[part] = value
        elif not isinstance(node.get(part), dict if nxt != "*" else list):
            node[part] = fresh
        if nxt == "*" and not node[part]:
            node[part].append({} if i + 2 < len(parts) else "x")
        at.append(part)
        node = node[part]
    return tuple(at)


WRONG: dict[str, st.SearchStrategy[Any]] = {
    "map": st.one_of(
        st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2), st.booleans()
    ),
    "list": st.one_of(
        st.integers(),
        st.text(max_size=5),
        st.dictionaries(st.text(min_size=1, max_size=3), st.integers(), max_size=2),
        st.booleans(),
        st.floats(allow_nan=False),
    ),
    "scalar": st.one_of(
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(min_size=1, max_size=3), st.integers(), max_size=2),
    ),
}


@pytest.mark.parametrize(("kind", "path", "shape"), CASES, ids=[f"{k}:{p}" for k, p, _ in CASES])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_wrong_type_at_a_field_read_is_exit_2_naming_it(
    kb: KnowledgeBase, kind: str, path: str, shape: str, data: st.DataObject
) -> None:
    obj = _base(kind)
    wrong = data.draw(WRONG[shape])
    at = _put(obj, path.split("."), wrong)
    found = shape_problem(obj)
    assert found is not None and found[0] == at
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]})
    with pytest.raises(BadInput) as err:
        snapshot.states_of(text, "bad.json", kb)
    assert f"{shown(at)} is " in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("bad.json: ")


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_the_fixture_objects_and_unset_fields_pass(kb: KnowledgeBase, kind: str) -> None:
    obj = _base(kind)
    assert shape_problem(obj) is None
    for path, _ in SHAPES[kind]:
        if "*" not in path:
            assert shape_problem(_nulled(obj, path)) is None


def _nulled(obj: dict[str, Any], path: str) -> dict[str, Any]:
    copied = copy.deepcopy(obj)
    _put(copied, path.split("."), None)
    return copied


def test_a_scalar_tolerations_through_check_is_one_line_exit_2() -> None:
    doc = yaml.safe_load(fixture_path("cluster", "s6", "objects.yaml").read_text())
    dep = next(i for i in doc["items"] if i["kind"] == "Deployment")
    dep["spec"]["template"]["spec"]["tolerations"] = 3
    result = CliRunner().invoke(
        cli,
        ["check", "--snapshot", "-", "--to", "harness-delegate=0.31.2"],
        input=yaml.safe_dump(doc),
    )
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert "<stdin>: Deployment harness-delegate-ng/harness-delegate: " in line
    assert "spec.template.spec.tolerations is a number, expected a list" in line


def test_of_two_wrong_fields_the_first_check_is_named() -> None:
    """The message names the first wrong field in the order of the checks (a status that
    is no map before a spec.chart that is none; the second container's name before the
    first one's image), not the first met walking the object."""
    release = _base("HelmRelease")
    release["spec"]["chart"] = "app"
    release["status"] = ["deployed"]
    assert shape_problem(release) == (("status",), "is a list, expected a map")
    dep = _base("Deployment")
    first, *_ = dep["spec"]["template"]["spec"]["containers"]
    dep["spec"]["template"]["spec"]["containers"] = [{**first, "image": ["a"]}, {"name": ["x"]}]
    found = shape_problem(dep)
    assert found is not None
    assert shown(found[0]) == "spec.template.spec.containers[1].name"
    assert found[1] == "is a list, expected a string or number"
