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
RUN useradd --system --uid 10001 --home-dir /var/lib/memoryd --create-home memoryd
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/* && rm -rf /wheels
USER memoryd
WORKDIR /var/lib/memoryd
ENV MEMORYD_LISTEN=0.0.0.0:50051 \
    MEMORYD_DATA_DIR=/var/lib/memoryd/data
EXPOSE 50051 50052
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import grpc,sys; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; \
s=g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')); \
sys.exit(0 if s.Check(h.HealthCheckRequest(), timeout=2).status == h.HealthCheckResponse.SERVING else 1)"
ENTRYPOINT ["memoryd", "serve"]
