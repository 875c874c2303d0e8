# Builds Flamediff for the dev stack (docker-compose.yaml) in stages:
#   backend   Go: the data source executables (both Linux architectures, named
#             as grafana-plugin-sdk-go's build names them) and the flamediff CLI
#   frontend  Node: the app, data source and panel bundles (npm run build)
#   plugin    dist/ as Grafana loads it: bundles + executables
#   grafana   Grafana with the plugin installed (unsigned, allowed by env)
#   cli       the flamediff CLI alone, for the one-shot seeder
ARG GO_VERSION=1.26
ARG NODE_VERSION=20
ARG GRAFANA_VERSION=13.1.2

FROM golang:${GO_VERSION}-bookworm AS backend
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY pkg ./pkg
COPY cmd ./cmd
COPY internal ./internal
# Static, stripped binaries like `mage -v` (grafana-plugin-sdk-go/build)
# makes; the nested data source's executable lives in dist/datasource/.
ENV CGO_ENABLED=0
RUN for arch in amd64 arm64; do \
      GOOS=linux GOARCH=$arch go build -ldflags '-w -s' \
        -o /out/datasource/gpx_flamediff_linux_$arch ./pkg || exit 1; \
    done \
 && go build -ldflags '-w -s' -o /out/flamediff ./cmd/flamediff

FROM node:${NODE_VERSION}-bookworm AS frontend
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --loglevel=error
COPY plugin.json tsconfig.json webpack.config.ts README.md ./
COPY .config ./.config
COPY src ./src
RUN npm run build

FROM busybox AS plugin
COPY --from=frontend /src/dist /dist
COPY --from=backend /out/datasource /dist/datasource

FROM grafana/grafana:${GRAFANA_VERSION} AS grafana
COPY --from=plugin /dist /var/lib/grafana/plugins/flamediff-flamediff-app

FROM debian:bookworm-slim AS cli
COPY --from=backend /out/flamediff /usr/local/bin/flamediff
ENTRYPOINT ["flamediff"]
