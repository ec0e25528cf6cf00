"""The fake API server itself, against the rules of domain/kubernetes-access.md (shared notes)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from support.fakeapi import FakeAPIFactory, FakeAPIServer, Faults, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]


def get(server: FakeAPIServer, path: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def test_version_and_discovery_with_and_without_slash(fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s8")
    for path in ("/version", "/version/"):
        code, body, headers = get(server, path)
        assert code == 200 and body["gitVersion"] == "v1.27.3-eks-4f4795d" and body["minor"] == "27"
        assert int(headers["Content-Length"]) > 0
    assert get(server, "/api/")[1]["versions"] == ["v1"]
    groups = {g["name"] for g in get(server, "/apis")[1]["groups"]}
    assert "apps" in groups and "helm.toolkit.fluxcd.io" not in groups  # no Flux in s8
    resources = get(server, "/apis/apps/v1")[1]
    assert resources["kind"] == "APIResourceList"
    assert {"name", "singularName", "namespaced", "kind", "verbs"} <= set(resources["resources"][0])


def test_unknown_resources_answer_a_404_status(fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s8")
    code, body, _ = get(server, "/apis/helm.toolkit.fluxcd.io/v2/helmreleases")
    assert code == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"


def test_lists_pages_and_selectors(fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s1")
    code, first, _ = get(server, "/apis/helm.toolkit.fluxcd.io/v2/helmreleases?limit=3")
    assert (
        code == 200 and first["kind"] == "HelmReleaseList" and first["metadata"]["resourceVersion"]
    )
    assert len(first["items"]) == 3 and first["metadata"]["remainingItemCount"] == 1
    token = first["metadata"]["continue"]
    rest = get(server, f"/apis/helm.toolkit.fluxcd.io/v2/helmreleases?limit=3&continue={token}")[1]
    assert [i["metadata"]["name"] for i in rest["items"]] == ["kagent-crds"]
    assert "continue" not in rest["metadata"]
    opaque = get(server, "/api/v1/secrets?fieldSelector=type%3DOpaque")[1]
    assert [i["metadata"]["name"] for i in opaque["items"]] == ["kagent-openai"]
    assert "kind" not in opaque["items"][0]  # built-in list items, as the API server sends them
    labelled = get(
        server,
        "/apis/apps/v1/deployments?labelSelector=app.kubernetes.io%2Fcomponent%3Dhelm-controller",
    )[1]
    assert [i["metadata"]["name"] for i in labelled["items"]] == ["helm-controller"]
    not_flux = get(server, "/apis/apps/v1/namespaces/kagent/deployments?labelSelector=app!%3Dnope")[
        1
    ]
    assert [i["metadata"]["name"] for i in not_flux["items"]] == ["kagent-controller"]
    assert get(server, "/api/v1/secrets?fieldSelector=spec.foo%3Dx")[0] == 400
    assert (
        get(server, "/api/v1/namespaces/kagent")[1]["kind"] == "Namespace"
    )  # a cluster-scoped GET


def test_faults_and_the_request_log(fake_api: FakeAPIFactory) -> None:
    faults = Faults(forbidden={"nodes"}, errors_500={"namespaces": 1}, gone_on_continue=1)
    server = fake_api.start(CLUSTER_FIXTURES / "s1", faults=faults)
    code, body, _ = get(server, "/api/v1/nodes")
    assert code == 403 and body["reason"] == "Forbidden" and "cannot list" in body["message"]
    assert get(server, "/api/v1/namespaces")[0] == 500
    assert get(server, "/api/v1/namespaces")[0] == 200
    token = get(server, "/apis/kagent.dev/v1alpha3/agenttemplates?limit=1")[1]["metadata"][
        "continue"
    ]
    gone = get(server, f"/apis/kagent.dev/v1alpha3/agenttemplates?limit=1&continue={token}")
    assert gone[0] == 410 and gone[1]["reason"] == "Expired"
    assert [r.status for r in server.requests] == [403, 500, 200, 200, 410]
    assert server.requests[0].method == "GET" and server.requests[0].auth is False
