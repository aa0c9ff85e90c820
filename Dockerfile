# Multi-stage build: a static zwatch binary on a Debian runtime that has the
# tools it drives (zpool/zfs from zfsutils-linux, smartctl from smartmontools).
#
# docker build -t zwatch .
# docker run -d --name zwatch --privileged \
#   --device /dev/zfs -v /dev:/dev -v /run/udev:/run/udev:ro \
#   -v /etc/zwatch:/etc/zwatch:ro -v zwatch-state:/var/lib/zwatch zwatch
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG BUILD_DATE=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/zwatch/zwatch/daemon.Version=${VERSION} -X github.com/zwatch/zwatch/daemon.BuildDate=${BUILD_DATE}" -o /out/zwatch ./cmd/zwatch

FROM debian:bookworm-slim
# zfsutils-linux is in Debian's contrib component. The userland must match the
# host's ZFS kernel module closely enough; bookworm ships 2.1.x.
RUN sed -i 's/^Components: main$/Components: main contrib/' /etc/apt/sources.list.d/debian.sources \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zfsutils-linux smartmontools ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/zwatch /usr/local/bin/zwatch
COPY configs/zwatch.example.yaml /etc/zwatch/zwatch.yaml
VOLUME /var/lib/zwatch
# The Go heap in small pages on hosts with transparent huge pages "always"
# (configs/zwatch.service says why).
ENV GODEBUG=disablethp=1
ENTRYPOINT ["/usr/local/bin/zwatch"]
CMD ["run", "--config", "/etc/zwatch/zwatch.yaml"]
