"""Chart archives read bounded: what the computed checks compare, and hostile archives refused."""

from __future__ import annotations

import io
import tarfile

import pytest
import yaml
from support.chartrepo import chart_tgz, crd

from upgradeplan.charts import archive
from upgradeplan.charts.archive import BadArchive, read

WIDGETS = crd("example.com", "widgets", "Widget", {"v1": True})


def test_metadata_values_schema_and_crds_are_read() -> None:
    data = chart_tgz(
        "demo",
        "1.2.3",
        app_version="v4.5.6",
        kube_version=">=1.25.0-0",
        values={"image": {"tag": "x"}},
        schema={"properties": {"image": {"properties": {"tag": {"type": "string"}}}}},
        crds={"widgets.yaml": WIDGETS},
    )
    chart = read(data, "demo-1.2.3.tgz")
    assert (chart.name, chart.version, chart.app_version, chart.kube_version) == (
        "demo",
        "1.2.3",
        "v4.5.6",
        ">=1.25.0-0",
    )
    assert chart.values == {"image": {"tag": "x"}}
    assert chart.schema is not None and "image" in chart.schema["properties"]
    [only] = chart.crds.values()
    assert (only.name, only.versions, only.storage, only.file) == (
        "widgets.example.com",
        ("v1",),
        "v1",
        "crds/widgets.yaml",
    )


def test_a_crd_template_is_read_plain_and_named_when_templated() -> None:
    plain = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    plain += "metadata: {name: gadgets.example.com}\nspec: {group: example.com, versions: []}\n"
    templated = plain.replace("gadgets", "{{ .Values.prefix }}gizmos")
    data = chart_tgz("demo", "1.0.0", templates={"gadgets.yaml": plain, "gizmos.yaml": templated})
    chart = read(data, "demo")
    assert set(chart.crds) == {"gadgets.example.com"}
    assert chart.crds["gadgets.example.com"].file == "templates/gadgets.yaml"
    assert chart.unrendered == ("templates/gizmos.yaml",)


def test_a_subcharts_crds_are_read_and_nothing_else_of_it() -> None:
    """kube-prometheus-stack keeps its CRDs in a subchart (charts/crds/crds/): Helm applies
    them with the chart's own."""
    sub = {"demo/charts/crds/Chart.yaml": b"name: crds\nversion: 0.1.0\n"}
    sub["demo/charts/crds/crds/w.yaml"] = yaml.safe_dump(WIDGETS).encode()
    sub["demo/charts/crds/values.yaml"] = b"only: here\n"
    sub["demo/charts/crds/templates/x.yaml"] = b"kind: CustomResourceDefinition\n"
    chart = read(chart_tgz("demo", "1.0.0", extra=sub), "demo")
    assert {n: c.file for n, c in chart.crds.items()} == {
        "widgets.example.com": "charts/crds/crds/w.yaml"
    }
    assert chart.values == {} and chart.unrendered == ()


def _tar(members: list[tuple[str, bytes]], kind: bytes = tarfile.REGTYPE) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.type = kind
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"not a tar at all", "not a gzipped tar archive"),
        (_tar([("../evil/Chart.yaml", b"name: x")]), "points outside the chart"),
        (_tar([("/etc/Chart.yaml", b"name: x")]), "points outside the chart"),
        (_tar([("demo/values.yaml", b"a: 1")]), "not one chart folder"),
        (_tar([("a/Chart.yaml", b"name: a"), ("b/Chart.yaml", b"name: b")]), "not one chart"),
        (_tar([("demo/Chart.yaml", b"name: [unclosed")]), "Chart.yaml is not YAML"),
    ],
)
def test_a_broken_or_hostile_archive_is_refused_with_its_name(data: bytes, said: str) -> None:
    with pytest.raises(BadArchive) as exc:
        read(data, "evil-1.0.0.tgz")
    assert str(exc.value).startswith("evil-1.0.0.tgz: ") and said in str(exc.value)


def test_the_bounds_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_MEMBERS", 3)
    many = [("demo/Chart.yaml", b"name: demo")] + [
        (f"demo/templates/{i}.yaml", b"") for i in range(5)
    ]
    with pytest.raises(BadArchive, match="more than 3 members"):
        read(_tar(many), "many")
    monkeypatch.setattr(archive, "MAX_FILE", 10)
    big = [("demo/Chart.yaml", b"name: demo"), ("demo/values.yaml", b"x: " + b"y" * 100)]
    with pytest.raises(BadArchive, match="larger than 10 bytes"):
        read(_tar(big), "big")
    monkeypatch.setattr(archive, "MAX_ARCHIVE", 5)
    with pytest.raises(BadArchive, match="larger than 5 bytes"):
        read(_tar(big), "huge")


def test_a_link_is_never_followed() -> None:
    data = _tar([("demo/Chart.yaml", b"name: demo\nversion: 1.0.0\n")])
    linked = io.BytesIO()
    with tarfile.open(fileobj=linked, mode="w:gz") as tar:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as src:
            for member in src:
                tar.addfile(member, src.extractfile(member))
        info = tarfile.TarInfo("demo/values.yaml")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
    assert read(linked.getvalue(), "linked").values == {}
