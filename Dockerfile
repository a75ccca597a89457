# syntax=docker/dockerfile:1
# Build: bundle the CLI into dist/ with esbuild (a dev dependency); split chunks, dependencies external.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY scripts/build.ts ./scripts/build.ts
COPY src ./src
RUN npm run build

# Production dependencies, and the files the runtime needs, gathered for a final stage without npm or a shell.
# Type declarations and source maps are never loaded (about 48 MB, most of it @kubernetes/client-node's).
FROM node:24.21.0-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
# systemd-inhibit, which holds logind's delay lock for the agent (src/logind/inhibitor.ts; README "When the
# host reboots by itself"), and exactly the libraries it links: Debian's systemd is installed here only to
# take the binary from it (the final stage gets the binary and its libraries, not the package).
RUN apt-get update \
 && apt-get install -y --no-install-recommends systemd \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /rootfs/usr/bin \
 && cp /usr/bin/systemd-inhibit /rootfs/usr/bin/ \
 && for lib in $(ldd /usr/bin/systemd-inhibit | grep -o '/[^ ]*'); do cp --parents -L "$lib" /rootfs/; done
# node and exactly the shared libraries it links (ldd), at their own paths: the same on every architecture.
RUN mkdir -p /rootfs/usr/local/bin /rootfs/etc /rootfs/tmp \
 && cp /usr/local/bin/node /rootfs/usr/local/bin/node \
 && for lib in $(ldd /usr/local/bin/node | grep -o '/[^ ]*'); do cp --parents -L "$lib" /rootfs/; done \
 && cp /etc/ld.so.cache /rootfs/etc/ \
 && chmod 1777 /rootfs/tmp

# Run: node, its libraries and the app, nothing else (no npm, no shell, no Debian; 379 MB before, BENCHMARKS.md).
FROM scratch AS run
# The version is the package version, as the image tag is (test/release.test.ts checks both).
LABEL org.opencontainers.image.title="drainer" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=runtime /rootfs /
ENV PATH=/usr/local/bin
ENV NODE_ENV=production
# A 1 MB young generation (V8's default is 16 MB per semi-space): the agent idles almost always, and its
# idle RSS drops by about 9 MB for a few more minor GCs while it works (bench footprint).
ENV NODE_OPTIONS=--max-semi-space-size=1
WORKDIR /app
COPY package.json ./
COPY --from=runtime /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY scenarios ./scenarios
COPY LICENSE ./LICENSE
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["daemon"]
