"""Snapshots in object storage: `snapshot --output s3://…` then `fleet s3://…`.

Against an S3-compatible server (moto's standalone server) that each test starts on
127.0.0.1 and stops, and the fake Kubernetes API server for the clusters. The round trip
must give the same roll-up as the same snapshots written to disk; credentials come from the
usual environment variables and never appear in any output. Without boto3 (the s3 extra), an
s3:// URL exits 2 naming the extra.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import invoke
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]

SECRET = "s3cr3t-never-printed-4f2a"
KEY_ID = "AKIAFLEETTESTKEY0001"
BUCKET = "snapshots"


@pytest.fixture
def s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
        import boto3

        boto3.session.Session().client("s3").create_bucket(Bucket=BUCKET)
        yield endpoint
    finally:
        server.stop()


def _clusters(fake_api: FakeAPIFactory) -> str:
    servers = {name: fake_api.start(CLUSTER_FIXTURES / name) for name in ("s1", "s4", "s6", "s8")}
    return fake_api.kubeconfig(dict(servers))


def _out(*args: str) -> tuple[int, str, str]:
    result = invoke(*args)
    return result.exit_code, result.stdout, result.stderr


def _without_sources(doc: dict[str, Any]) -> dict[str, Any]:
    """The roll-up with the sources (a path or an object URL) taken out."""
    for inst in doc["installations"]:
        inst.pop("source")
    for h in doc["hazards"]:
        for who in (*h["applies_to"], *h["may_apply_to"]):
            who.pop("source")
    for u in doc["unreadable"]:
        u.pop("source")
    return doc


def test_round_trip_equals_disk(s3_server: str, fake_api: FakeAPIFactory, tmp_path: Path) -> None:
    kubeconfig = _clusters(fake_api)
    outputs: list[str] = []
    code, out, err = _out(
        "snapshot", "--kubeconfig", kubeconfig, "--all-contexts", "-o", f"s3://{BUCKET}/fleet/"
    )
    outputs += [out, err]
    assert code == 0, err
    for name in ("s1", "s4", "s6", "s8"):
        assert f"wrote s3://{BUCKET}/fleet/{name}.yaml" in err
    disk = tmp_path / "disk"
    disk.mkdir()
    for name in ("s1", "s4", "s6", "s8"):
        code, out, err = _out(
            "snapshot",
            "--kubeconfig",
            kubeconfig,
            "--context",
            name,
            "-f",
            str(disk / f"{name}.yaml"),
        )
        outputs += [out, err]
        assert code == 0, err

    import boto3

    s3 = boto3.session.Session().client("s3")
    stored = s3.get_object(Bucket=BUCKET, Key="fleet/s1.yaml")["Body"].read()
    assert stored == (disk / "s1.yaml").read_bytes()  # the same bytes as on disk

    args = ("-o", "json", "--to", "latest", "--installed", "harness-cd=24.12.0")
    code_s3, out_s3, err_s3 = _out("fleet", f"s3://{BUCKET}/fleet/", *args)
    code_disk, out_disk, err_disk = _out("fleet", str(disk), *args)
    outputs += [out_s3, err_s3, out_disk, err_disk]
    from_s3, from_disk = json.loads(out_s3), json.loads(out_disk)
    assert [i["source"] for i in from_s3["installations"]] == [
        f"s3://{BUCKET}/fleet/{n}.yaml" for n in ("s1", "s4", "s6", "s8")
    ]
    assert code_s3 == code_disk == 3
    assert _without_sources(from_s3) == _without_sources(from_disk)
    assert len(from_s3["installations"]) == 4
    for text in outputs:
        assert SECRET not in text
        assert KEY_ID not in text


def test_errors_name_the_bucket_never_the_credentials(s3_server: str) -> None:
    code, out, err = _out("fleet", "s3://no-such-bucket/fleet/")
    assert code == 2
    assert "s3://no-such-bucket/fleet/" in err and "NoSuchBucket" in err
    assert SECRET not in out + err and KEY_ID not in out + err
    code, _, err = _out("fleet", f"s3://{BUCKET}/empty/")
    assert code == 2
    assert "no snapshot objects" in err


def test_a_malformed_object_is_listed_and_the_run_goes_on(s3_server: str, tmp_path: Path) -> None:
    import boto3

    s3 = boto3.session.Session().client("s3")
    s3.put_object(Bucket=BUCKET, Key="mixed/bad.yaml", Body=b"kind: upgradeplan-state\nfacts: [")
    state = (
        "schema_version: 1\nkind: upgradeplan-state\nname: prod\nfacts:\n"
        "  installed.harness-delegate: {value: '0.29.0', source: stated}\n"
        "  installed.kubernetes: {value: '1.27.3', source: stated}\n"
    )
    s3.put_object(Bucket=BUCKET, Key="mixed/prod.yaml", Body=state.encode())
    code, out, _ = _out("fleet", f"s3://{BUCKET}/mixed/", "-o", "json", "--to", "latest")
    doc = json.loads(out)
    assert [u["source"] for u in doc["unreadable"]] == [f"s3://{BUCKET}/mixed/bad.yaml"]
    assert "malformed YAML" in doc["unreadable"][0]["reason"]
    assert [i["name"] for i in doc["installations"]] == ["prod"]
    assert code == 3  # delegate-needs-kubernetes-128 applies on 1.27


def test_without_the_extra_an_s3_url_exits_2_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 raises ImportError
    for args in (
        ("fleet", "s3://bucket/prefix/"),
        ("snapshot", "--kubeconfig", str(tmp_path / "none"), "-o", "s3://bucket/prefix/"),
    ):
        code, out, err = _out(*args)
        assert code == 2, args
        assert "upgradeplan[s3]" in err and "Traceback" not in out + err
