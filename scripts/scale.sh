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
source "$(dirname "$0")/with-broker.sh"
trap stop_broker EXIT
go run ./scripts/scale --okstream "$bin" --brokers "$OKSTREAM_TEST_BROKERS" --logs "$dir" "$@"
