# syntax=docker/dockerfile:1
# Build: bundle the CLI into dist/ with esbuild (a dev dependency); split chunks, dependencies external.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY scripts/build.ts ./scripts/build.ts
COPY src ./src
RUN npm run build

# Run: production dependencies only, no npm in the signal path, numeric non-root user.
FROM node:24.21.0-bookworm-slim AS run
# The version is the package version, as the image tag is (test/release.test.ts checks both).
LABEL org.opencontainers.image.title="drainer" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
# A 1 MB young generation (V8's default is 16 MB per semi-space): the agent idles almost always, and its
# idle RSS drops by about 9 MB for a few more minor GCs while it works (bench footprint).
ENV NODE_OPTIONS=--max-semi-space-size=1
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY scenarios ./scenarios
COPY LICENSE ./LICENSE
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["daemon"]
