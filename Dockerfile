# A small non-root image of upgradeplan (docs/ci.md):
#   docker build -t upgradeplan .
#   docker run --rm -v "$PWD:/work" upgradeplan check --gitops . --base origin/main
# No kubernetes client (the slim install); git for --base.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY upgradeplan ./upgradeplan
COPY knowledge ./knowledge
COPY packs ./packs
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels upgradeplan && rm -rf /wheels
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin upgradeplan
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["upgradeplan"]
CMD ["--help"]
