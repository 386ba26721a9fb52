# syntax=docker/dockerfile:1
# Build stage: wheels for memoryd, memoryd-client and their dependencies.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY clients/python ./clients/python
RUN pip wheel --no-cache-dir --wheel-dir /wheels ./clients/python .

# Runtime stage: only the installed wheels, running as an unprivileged user.
FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/memoryd --create-home memoryd \
 && install -d -o memoryd -g memoryd /var/lib/memoryd/data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/* && rm -rf /wheels
USER memoryd
WORKDIR /var/lib/memoryd
# Defaults that work with nothing else set (README, "Docker"): serve every interface with
# bearer-token authentication, keeping SQLite, Qdrant and the tokens file on the volume.
# On first start memoryd creates the tokens file with one random token for the tenant
# `default` (read it with `docker exec <container> cat /var/lib/memoryd/data/tokens`);
# MEMORYD_TOKENS, or a tokens file of your own, replaces it.
ENV MEMORYD_LISTEN=0.0.0.0:50051 \
    MEMORYD_DATA_DIR=/var/lib/memoryd/data \
    MEMORYD_TOKENS_FILE=/var/lib/memoryd/data/tokens \
    MEMORYD_TOKENS_FILE_CREATE=true
VOLUME ["/var/lib/memoryd/data"]
EXPOSE 50051 50052
# `memoryd health` reads the same settings as the server: it follows MEMORYD_LISTEN and TLS.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["memoryd", "health"]
ENTRYPOINT ["memoryd", "serve"]
