#!/usr/bin/env bash
# scripts/scale.sh: events/s of 1, 2 and 3 `okstream run` instances in one
# consumer group on a real Kafka (issue 17), with --passthrough, FORKS and
# FOGD; prints a table. Uses OKSTREAM_TEST_BROKERS if set, else starts
# scripts/kafka.sh's broker (KAFKA_PORT, KAFKA_CONTROLLER_PORT as there) and
# stops it at the end. Extra arguments go to scripts/scale (see its doc:
# --events, --instances, --configs, --partitions, --data).
#
# Not in CI: on a 2-core machine one run takes several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)/okstream"
go build -o "$bin" ./cmd/okstream
started=""
if [[ -z "${OKSTREAM_TEST_BROKERS:-}" ]]; then
	eval "$(scripts/kafka.sh start)"
	started=1
fi
stop() { [[ -n "$started" ]] && scripts/kafka.sh stop >/dev/null || true; }
trap stop EXIT
go run ./scripts/scale --okstream "$bin" --brokers "$OKSTREAM_TEST_BROKERS" "$@"
