# pexe2wasm: the CLI (`pexe2wasm`) and the HTTP service (`pexe2wasm-server`) in one image.
#
#   docker build -t pexe2wasm .
#   docker run --rm -p 8080:8080 pexe2wasm                       # the service
#   docker run --rm -v "$PWD:/data" --user "$(id -u):$(id -g)" pexe2wasm \
#       pexe2wasm batch /data/in -o /data/out                    # the CLI
#
# Stage 1 builds both release binaries; stage 2 is a slim Debian with only them.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Everything cargo needs to resolve the workspace (.dockerignore drops target/ and .git).
COPY . .
# Cache mounts keep the registry and target/ between builds; the binaries are copied out
# of the cached target/ because the mount is not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p pexe2wasm-cli -p pexe2wasm-server \
        --bin pexe2wasm --bin pexe2wasm-server \
    && mkdir -p /out \
    && cp target/release/pexe2wasm target/release/pexe2wasm-server /out/

FROM debian:bookworm-slim AS runtime
# A fixed unprivileged user: the service never needs root.
RUN groupadd --system --gid 10001 pexe2wasm \
    && useradd --system --uid 10001 --gid pexe2wasm --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin pexe2wasm
COPY --from=build /out/pexe2wasm /out/pexe2wasm-server /usr/local/bin/
# Listen on every interface inside the container (the binary's default is 127.0.0.1).
ENV PEXE2WASM_LISTEN=0.0.0.0:8080
EXPOSE 8080
WORKDIR /data
USER 10001:10001
# bash's /dev/tcp speaks enough HTTP for GET /healthz, so the image needs no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PEXE2WASM_LISTEN##*:} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
CMD ["pexe2wasm-server"]
