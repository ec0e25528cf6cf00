"""Chart archives from a Helm repository, an OCI registry and a folder, served on 127.0.0.1 by
the test; the cache; every failure named, credentials never shown."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.chartrepo import chart_tgz, helm_repository, oci_registry

from upgradeplan.charts.fetch import Fetcher, NotRead, cache_dir, from_folder

OLD = chart_tgz("demo", "1.0.0")
NEW = chart_tgz("demo", "2.0.0+build.1")
CHARTS = {("demo", "1.0.0"): OLD, ("demo", "2.0.0+build.1"): NEW}


def _fetcher(cache: Path | None) -> Fetcher:
    return Fetcher(timeout=5, deadline=time.monotonic() + 30, cache=cache, environ={})


def test_a_helm_repository_gives_the_archive_its_index_names(tmp_path: Path) -> None:
    with helm_repository(CHARTS) as served:
        fetcher = _fetcher(tmp_path)
        data, where = fetcher.archive(served.url, "demo", "1.0.0")
        assert data == OLD and where == f"{served.url}/charts/demo-1.0.0.tgz"
        fetcher.archive(served.url, "demo", "2.0.0+build.1")
        # the index is read once per run
        assert served.requests == [
            "/index.yaml",
            "/charts/demo-1.0.0.tgz",
            "/charts/demo-2.0.0+build.1.tgz",
        ]


def test_an_oci_registry_gives_the_helm_layer_after_the_anonymous_token(tmp_path: Path) -> None:
    with oci_registry(CHARTS) as served:
        ref = "oci://" + served.url.removeprefix("http://") + "/charts/demo"
        data, where = _fetcher(tmp_path).archive(ref, "demo", "2.0.0+build.1")
        assert data == NEW and where == f"{ref}:2.0.0+build.1"
        manifest = "/v2/charts/demo/manifests/2.0.0_build.1"  # + is _ in a tag
        assert served.requests[:3] == [manifest, "/token", manifest]
        assert served.requests[3].startswith("/v2/charts/demo/blobs/sha256:")
        # a HelmRepository of type oci names the path without the chart
        base = "oci://" + served.url.removeprefix("http://") + "/charts"
        assert _fetcher(None).archive(base, "demo", "1.0.0")[0] == OLD


def test_a_cache_hit_makes_no_request(tmp_path: Path) -> None:
    for serve in (helm_repository, oci_registry):
        with serve(CHARTS) as served:
            repo = served.url
            if serve is oci_registry:
                repo = "oci://" + served.url.removeprefix("http://") + "/charts/demo"
            first = _fetcher(tmp_path).archive(repo, "demo", "1.0.0")
            asked = len(served.requests)
            assert asked >= 2
            again = _fetcher(tmp_path).archive(repo, "demo", "1.0.0")
            assert again[0] == first[0] and again[1].endswith("(cached)")
            assert len(served.requests) == asked  # not one request more


def test_a_cached_archive_that_no_longer_matches_its_digest_is_read_again(
    tmp_path: Path,
) -> None:
    with helm_repository(CHARTS) as served:
        _fetcher(tmp_path).archive(served.url, "demo", "1.0.0")
        for blob in (tmp_path / "blobs").iterdir():
            blob.write_bytes(b"tampered")
        data, where = _fetcher(tmp_path).archive(served.url, "demo", "1.0.0")
        assert data == OLD and not where.endswith("(cached)")


@pytest.mark.parametrize(
    ("chart", "version", "said"),
    [
        ("demo", "9.9.9", "index.yaml lists no demo 9.9.9"),
        ("other", "1.0.0", "index.yaml lists no chart other"),
    ],
)
def test_a_version_the_index_does_not_list_is_named(chart: str, version: str, said: str) -> None:
    with helm_repository(CHARTS) as served, pytest.raises(NotRead) as exc:
        _fetcher(None).archive(served.url, chart, version)
    assert said in str(exc.value)


def test_a_server_error_is_retried_then_named(tmp_path: Path) -> None:
    with helm_repository(CHARTS) as served:
        served.fail.add("/index.yaml")
        with pytest.raises(NotRead) as exc:
            _fetcher(tmp_path).archive(served.url, "demo", "1.0.0")
        assert served.requests == ["/index.yaml"] * 3  # the first try and two more
        assert str(exc.value) == f"{served.url}/index.yaml: HTTP 500"


def test_a_registry_without_the_tag_and_an_unreachable_host_are_named() -> None:
    with oci_registry(CHARTS, token=False) as served:
        ref = "oci://" + served.url.removeprefix("http://") + "/charts/demo"
        with pytest.raises(NotRead, match=r"manifests/3\.0\.0: HTTP 404: not found"):
            _fetcher(None).archive(ref, "demo", "3.0.0")
    fetcher = _fetcher(None)
    with pytest.raises(NotRead, match="connection refused"):
        fetcher.archive(served.url, "demo", "1.0.0")  # the server has stopped
    with pytest.raises(NotRead, match=r"earlier in this run"):
        fetcher.archive(served.url, "demo", "2.0.0+build.1")
    assert fetcher.requests == 1


def test_credentials_in_a_repository_url_are_sent_but_never_shown() -> None:
    with helm_repository(CHARTS) as served:
        secret = served.url.replace("http://", "http://robot:s3cr3t-pw@")
        data, where = _fetcher(None).archive(secret, "demo", "1.0.0")
        assert data == OLD and "s3cr3t" not in where and "robot" not in where
        with pytest.raises(NotRead) as exc:
            _fetcher(None).archive(secret, "demo", "7.7.7")
        assert "s3cr3t" not in str(exc.value)


def test_a_fetchers_repr_shows_neither_the_environment_nor_the_urls_read() -> None:
    with helm_repository(CHARTS) as served:
        secret = served.url.replace("http://", "http://robot:s3cr3t-pw@")
        fetcher = Fetcher(timeout=5.0, environ={"HTTPS_PROXY": "http://u:pr0xy-pw@proxy:3128"})
        fetcher.archive(secret, "demo", "1.0.0")
        with pytest.raises(NotRead):
            fetcher.archive("http://robot:s3cr3t-pw@127.0.0.1:9/", "demo", "1.0.0")
    shown = repr(fetcher)
    assert "s3cr3t" not in shown and "pr0xy" not in shown, shown
    assert shown.startswith("Fetcher(timeout=5.0, cache=None, requests=")


def test_a_folder_holds_chart_version_tgz_with_or_without_v(tmp_path: Path) -> None:
    (tmp_path / "demo-1.0.0.tgz").write_bytes(OLD)
    assert from_folder(tmp_path, "demo", "v1.0.0")[0] == OLD
    assert from_folder(tmp_path, "demo", "1.0.0")[1] == str(tmp_path / "demo-1.0.0.tgz")
    with pytest.raises(NotRead, match=r"demo-2\.0\.0\.tgz: no such file"):
        from_folder(tmp_path, "demo", "2.0.0")


def test_the_cache_is_in_the_users_cache_folder(tmp_path: Path) -> None:
    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "upgradeplan" / "charts"
    assert cache_dir({"HOME": "/nowhere"}).parts[-2:] == ("upgradeplan", "charts")
