# okstream container image: `docker build --build-arg VERSION=$(git describe --always --dirty) -t okstream .`
# (docker-compose.yml builds it too).
# Build stage: the Go toolchain of go.mod's major version, a static binary.
FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so code changes do not download the modules again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version `okstream version` prints: the build context has no .git, so
# pass it, e.g. docker build --build-arg VERSION=$(git describe --always --dirty) .
# (docker-compose.yml passes $OKSTREAM_VERSION).
ARG VERSION=unversioned
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/okstream ./cmd/okstream

# Runtime stage: a small image with a shell and wget (for the healthcheck), run as a non-root user.
FROM alpine:3.22
RUN adduser -D -H -u 10001 okstream
COPY --from=build /out/okstream /usr/local/bin/okstream
# A small class-sorted dataset (UCI spambase, CC BY 4.0; testdata/spambase/README.md)
# so that `docker compose up` replays something without ../shared/datasets.
COPY testdata/spambase /usr/share/okstream/testdata/spambase
USER okstream
# /metrics, /healthz and /readyz of `okstream run`. Outside a container they
# listen on 127.0.0.1 by default (no authentication); inside one, loopback
# would be unreachable for Prometheus, so the image listens on every
# interface of the container (a --metrics-addr flag still overrides it).
# Publish the port only where the network is trusted.
ENV OKSTREAM_METRICS_ADDR=:9090
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/okstream"]
CMD ["help"]
