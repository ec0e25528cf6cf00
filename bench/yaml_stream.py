"""Benchmark: one long multi-document YAML file through ``yamlload.load_paths``.

A file of ``--docs`` HelmReleases (default 20,000), as a rendered manifest or a ``kubectl get
-o yaml`` dump in a repository can be, read in one call the way the GitOps reader reads a
file: CPU seconds of the call and the process's peak resident memory.

    python bench/yaml_stream.py [--docs 20000]
"""

from __future__ import annotations

import argparse
import resource
import time

from upgradeplan.yamlload import load_paths

DOC = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app-%d, namespace: apps}
spec:
  chart:
    spec: {chart: app, version: "1.2.%d", sourceRef: {kind: HelmRepository, name: repo}}
  values:
    replicas: 2
    image: {repository: ghcr.io/example/app, tag: v1.2.3}
    resources: {limits: {cpu: 100m, memory: 128Mi}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    args = parser.parse_args()
    text = "---\n".join(DOC % (i, i) for i in range(args.docs))
    started = time.process_time()
    out = load_paths(text)
    cpu = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    size = len(text) / 2**20
    print(f"{len(out)} documents, {size:.1f} MiB: {cpu:.2f} s CPU, peak {peak:.0f} MiB")


if __name__ == "__main__":
    main()
