# xs2a-edge for a bank's own data centre. Runs the gateway with the policy file mounted at
# /etc/xs2a-edge/policy.yaml (see compose.yaml for a setup with Redis).
FROM denoland/deno:2.9.6
WORKDIR /app
COPY deno.json deno.lock ./
COPY main.ts serve.ts ./
COPY src ./src
COPY middleware ./middleware
COPY config ./config
RUN deno install --frozen && deno cache main.ts \
  && mkdir -p /var/lib/xs2a-edge && chown deno:deno /var/lib/xs2a-edge
USER deno
# The store a policy that names none gets (SQLite; a Deno KV file with store.kind: kv) lives here,
# on a volume: a new container remembers the X-Request-IDs the last one executed.
ENV GATEWAY_DATA_DIR=/var/lib/xs2a-edge
VOLUME /var/lib/xs2a-edge
# The policy file is watched (GATEWAY_WATCH defaults to true): a Kubernetes ConfigMap swap or an
# edit of the mounted file reloads it, as SIGHUP does (docker kill --signal HUP).
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
# Liveness: the gateway answers /healthz. Not /readyz: an unreachable core or store is no reason to
# replace the container (orchestrators that route by readiness ask /readyz themselves).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('PORT')}/healthz`); Deno.exit(r.ok ? 0 : 1)"]
CMD ["run", "--v8-flags=--no-allocation-site-pretenuring,--no-memory-reducer,--heap-growing-percent=100", "--allow-net", "--allow-env", "--allow-read", "--allow-sys", "--allow-write=/var/lib/xs2a-edge", "--unstable-kv", "main.ts", "--policy", "/etc/xs2a-edge/policy.yaml"]
