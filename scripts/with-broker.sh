# scripts/with-broker.sh: sourced by scripts/scale.sh and scripts/recovery.sh.
# Builds okstream into $bin (a temporary directory, $dir) and sets
# OKSTREAM_TEST_BROKERS: the one given, or scripts/kafka.sh's broker, started
# here (KAFKA_PORT, KAFKA_CONTROLLER_PORT as there) and stopped by
# stop_broker (the caller's EXIT trap calls it), which also removes the
# binary (and $dir when nothing else was written there).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir="$(mktemp -d)"
bin="$dir/okstream"
go build -o "$bin" ./cmd/okstream
started=""
if [[ -z "${OKSTREAM_TEST_BROKERS:-}" ]]; then
	eval "$(scripts/kafka.sh start)"
	started=1
fi
stop_broker() {
	rm -f "$bin" # the logs stay in $dir
	rmdir "$dir" 2>/dev/null || true
	[[ -n "$started" ]] && scripts/kafka.sh stop >/dev/null || true
}
