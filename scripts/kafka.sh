#!/usr/bin/env bash
# scripts/kafka.sh: run a real single-node Apache Kafka (KRaft, combined
# broker+controller) on 127.0.0.1 from Maven Central jars, for tests and local runs.
#
#   scripts/kafka.sh start [--keep-data]   start in the background, wait until it serves clients
#   scripts/kafka.sh stop                  SIGTERM our own broker PID, SIGKILL after $KAFKA_STOP_TIMEOUT s
#   scripts/kafka.sh restart [--keep-data]
#   scripts/kafka.sh status                exit 0 if running, 1 if not
#   scripts/kafka.sh env                   print: export OKSTREAM_TEST_BROKERS=127.0.0.1:9092
#                                          (and the OKSTREAM_TEST_SASL_* exports with KAFKA_SASL_PORT)
#   scripts/kafka.sh logs [-f] [N]         tail the broker log
#
#   eval "$(scripts/kafka.sh start)"      # stdout is only `export ...` and `#` comments
#   go test ./...                          # now also runs against the real broker
#
# Needs Java 17+ and Maven 3.8+ with access to Maven Central (first start only).
# The jars (kafka_2.13 and its runtime dependencies, about 45 jars and 43 MB) are
# fetched once with Maven into $OKSTREAM_KAFKA_HOME/lib and reused afterwards.
# Kafka 4.x's POM brings log4j-core/log4j-api 2.x and slf4j-api 1.7 but not the
# SLF4J->log4j2 binding (it is test-only in Kafka's build); without it the broker
# runs but logs nothing. The script adds org.apache.logging.log4j:log4j-slf4j-impl
# (or -slf4j2-impl for slf4j-api 2.x) at the log4j-core version Maven resolved,
# and configures log4j2 with an XML file (no YAML/jackson needed).
#
# Timings measured on the 2-vCPU dev VM (Kafka 4.1.2, Java 17), which had other
# builds and tests running (load average 4-12):
#   first start (Maven fetch of the jars, 15-70 s; format; start; ready):  26-99 s
#   later starts (jars cached, fresh data dir):                            4.5-14 s
#     (without the CDS archive and C1-only JIT below they took 12-20 s at load 10)
#   stop (controlled shutdown):                                            2-4 s
#   first stop after a cold start (writes the CDS archive):                8-30 s
#   broker RSS: about 200 MB idle, 275 MB after the kafkatest suite, 560 MB
#   after the checkpoint/consumer/producer suites (-Xmx512m)
#
# SASL_SSL (optional): with KAFKA_SASL_PORT set, the broker also listens there
# with SASL over TLS (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512), next to the
# PLAINTEXT port, which the rest of the suite keeps using. The first such start
# makes a throw-away CA, a broker certificate for 127.0.0.1/localhost (PKCS12
# keystore, PKCS12 truststore with the CA, via openssl and keytool) and a client
# certificate for mutual TLS (the listener has ssl.client.auth=requested: a
# client certificate is verified if presented, not required) under
# $NODE/tls. The SCRAM users are written into the cluster metadata when the
# data dir is formatted (kafka-storage format --add-scram, i.e.
# kafka.tools.StorageTool); the PLAIN user is in the listener's JAAS config
# in server.properties. One user and password serve all three mechanisms.
# These credentials protect a loopback test broker only.
#
# Every start begins with an empty cluster (a copy of the data dir formatted at
# the first start, so no formatting JVM runs again); `start --keep-data` (or
# KAFKA_KEEP_DATA=1) keeps topics and offsets from the previous run.
# "Ready" means: the log says "Kafka Server started", a Metadata request on the
# client port lists the broker, a FindCoordinator request succeeds (which
# creates __consumer_offsets, so the first consumer-group join in a test does
# not wait for it), and `kcat -L` sees the broker if kcat is installed.
#
# Environment (defaults):
#   KAFKA_VERSION=4.1.2           Apache Kafka 4.x version on Maven Central
#   OKSTREAM_KAFKA_HOME=~/.cache/okstream/kafka-$KAFKA_VERSION   jars + node state
#   KAFKA_PORT=9092               client (PLAINTEXT) port on 127.0.0.1
#   KAFKA_CONTROLLER_PORT=9093    KRaft controller port on 127.0.0.1
#   KAFKA_SASL_PORT=              SASL_SSL port on 127.0.0.1 (empty: no SASL_SSL listener)
#   KAFKA_SASL_USER=okstream      SASL user (PLAIN and SCRAM)
#   KAFKA_SASL_PASSWORD=okstream-test-secret   its password
#   KAFKA_HEAP=512m               -Xmx and -Xms
#   KAFKA_JVM_OPTS=               extra JVM options
#   KAFKA_JIT=c1                  c1: C1 JIT only (-XX:TieredStopAtLevel=1), starts much faster on
#                                 a busy 2-core machine, same test throughput here; full: C1+C2
#   KAFKA_CDS=1                   1: class-data sharing archive of the broker's classes, written
#                                 when the first broker stops, used by later starts; 0: off
#   KAFKA_KEEP_DATA=0             1: keep the data dir across starts
#   KAFKA_START_TIMEOUT=90        seconds to wait for readiness
#   KAFKA_STOP_TIMEOUT=30         seconds to wait after SIGTERM before SIGKILL
#   JAVA=java  MVN=mvn
set -euo pipefail

KAFKA_VERSION="${KAFKA_VERSION:-4.1.2}"
KAFKA_HOST=127.0.0.1
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_SASL_PORT="${KAFKA_SASL_PORT:-}"
KAFKA_SASL_USER="${KAFKA_SASL_USER:-okstream}"
KAFKA_SASL_PASSWORD="${KAFKA_SASL_PASSWORD:-okstream-test-secret}"
KAFKA_HEAP="${KAFKA_HEAP:-512m}"
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:-}"
KAFKA_JIT="${KAFKA_JIT:-c1}"
KAFKA_CDS="${KAFKA_CDS:-1}"
KAFKA_KEEP_DATA="${KAFKA_KEEP_DATA:-0}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
KAFKA_STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"
HOME_DIR="${OKSTREAM_KAFKA_HOME:-${HOME:-/tmp}/.cache/okstream/kafka-$KAFKA_VERSION}"
LIB="$HOME_DIR/lib"
NODE="$HOME_DIR/node-$KAFKA_PORT" # one node dir per client port: conf, data, log, pid
CONF="$NODE/conf"
DATA="$NODE/data"
LOG="$NODE/kafka.log"
PIDFILE="$NODE/kafka.pid"
BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"
TLSDIR="$NODE/tls"
# Password of the broker's keystore and truststore files (throw-away, loopback).
STORE_PASS=okstream-test-store
# Pinned: Maven 3.8.7's default maven-dependency-plugin is too old for these goals.
MDP="org.apache.maven.plugins:maven-dependency-plugin:3.6.1"

say() { echo "kafka.sh: $*" >&2; }
die() {
	say "$@"
	exit 1
}

usage() {
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# ---------------------------------------------------------------- jars

fetch_jars() {
	case "$KAFKA_VERSION" in
	[4-9].*) ;;
	*) die "KAFKA_VERSION=$KAFKA_VERSION: this script runs Kafka 4.x (KRaft, log4j2) only" ;;
	esac
	command -v "$MVN" >/dev/null || die "Maven ($MVN) is needed to fetch the Kafka jars"
	mkdir -p "$HOME_DIR"
	local tmp
	tmp=$(mktemp -d "$HOME_DIR/fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand $tmp now
	trap "rm -rf '$tmp'" EXIT
	say "fetching Apache Kafka $KAFKA_VERSION jars from Maven Central (first start only)"
	cat >"$tmp/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>okstream.local</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <!-- kafka_2.13 brings the broker modules (server, raft, metadata, storage,
         group/transaction/share coordinators, clients), scala, jackson,
         log4j-core/api and slf4j-api as runtime dependencies. -->
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
	(cd "$tmp" && "$MVN" -B -q "$MDP:copy-dependencies" -DincludeScope=runtime -DoutputDirectory="$tmp/lib") >"$tmp/mvn.log" 2>&1 ||
		{
			tail -n 40 "$tmp/mvn.log" >&2
			die "Maven could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION"
		}
	[ -f "$tmp/lib/kafka_2.13-$KAFKA_VERSION.jar" ] || die "kafka_2.13-$KAFKA_VERSION.jar missing after Maven"

	# The SLF4J -> log4j2 binding, matching the resolved log4j-core and slf4j-api.
	local f l4j="" slf=1 binding
	for f in "$tmp"/lib/log4j-core-*.jar; do
		[ -e "$f" ] && l4j=${f##*/log4j-core-} && l4j=${l4j%.jar}
	done
	for f in "$tmp"/lib/slf4j-api-*.jar; do
		[ -e "$f" ] && slf=${f##*/slf4j-api-} && slf=${slf%%.*}
	done
	[ -n "$l4j" ] || die "no log4j-core among the resolved jars; this Kafka version needs a different logging setup"
	binding=log4j-slf4j-impl
	[ "$slf" -ge 2 ] && binding=log4j-slf4j2-impl
	(cd "$tmp" && "$MVN" -B -q "$MDP:copy" -Dartifact="org.apache.logging.log4j:$binding:$l4j" -DoutputDirectory="$tmp/lib") >>"$tmp/mvn.log" 2>&1 ||
		{
			tail -n 40 "$tmp/mvn.log" >&2
			die "Maven could not fetch org.apache.logging.log4j:$binding:$l4j"
		}
	rm -rf "$LIB" "$HOME_DIR"/cds-*.jsa
	mv "$tmp/lib" "$LIB"
	echo "$KAFKA_VERSION log4j=$l4j slf4j-binding=$binding" >"$LIB/.complete"
	rm -rf "$tmp"
	trap - EXIT
	say "cached $(find "$LIB" -name '*.jar' | wc -l) jars in $LIB (log4j $l4j, $binding)"
}

# ---------------------------------------------------------------- config

# make_tls: a throw-away CA, the broker's keystore (certificate for 127.0.0.1
# and localhost) and truststore (the CA), and a client certificate for mTLS,
# made once per node dir.
make_tls() {
	[ -f "$TLSDIR/.complete" ] && return 0
	command -v openssl >/dev/null || die "openssl is needed for the SASL_SSL listener (KAFKA_SASL_PORT)"
	command -v keytool >/dev/null || die "keytool (from the JDK) is needed for the SASL_SSL listener (KAFKA_SASL_PORT)"
	rm -rf "$TLSDIR"
	mkdir -p "$TLSDIR"
	(
		cd "$TLSDIR"
		openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=okstream throw-away test CA" \
			-keyout ca-key.pem -out ca.pem
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
		printf 'extendedKeyUsage=clientAuth\n' >client.ext
		for who in server client; do
			openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=okstream-test-$who" -keyout "$who-key.pem" -out "$who.csr"
			openssl x509 -req -sha256 -days 3650 -in "$who.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
				-extfile "$who.ext" -out "$who.pem"
		done
		openssl pkcs12 -export -name broker -in server.pem -inkey server-key.pem -certfile ca.pem \
			-passout "pass:$STORE_PASS" -out broker.keystore.p12
		keytool -importcert -noprompt -alias ca -file ca.pem -storetype PKCS12 \
			-keystore broker.truststore.p12 -storepass "$STORE_PASS"
		chmod 600 ./*-key.pem
	) >"$NODE/tls.log" 2>&1 || {
		cat "$NODE/tls.log" >&2
		die "making the test CA and broker keystore in $TLSDIR failed"
	}
	touch "$TLSDIR/.complete"
}

write_config() {
	mkdir -p "$CONF"
	local listeners="PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$KAFKA_CONTROLLER_PORT"
	local protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
	if [ -n "$KAFKA_SASL_PORT" ]; then
		listeners="$listeners,SASL_SSL://$KAFKA_HOST:$KAFKA_SASL_PORT"
		protocols="$protocols,SASL_SSL:SASL_SSL"
	fi
	cat >"$CONF/server.properties" <<EOF
# Written by scripts/kafka.sh on every start; edit the script, not this file.
# --- KRaft combined mode, single node, loopback only ---
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$KAFKA_HOST:$KAFKA_CONTROLLER_PORT
listeners=$listeners
advertised.listeners=$listeners
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=$protocols
log.dirs=$DATA
num.network.threads=2
num.io.threads=4
background.threads=4
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
# Tests create their topics explicitly.
auto.create.topics.enable=false
# --- single-node internal topics ---
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
# --- consumer groups suited to tests ---
group.initial.rebalance.delay.ms=0
# Allows short session timeouts in tests (Kafka's default minimum is 6000).
group.min.session.timeout.ms=500
# --- make compaction observable within seconds (topics still need
# segment.ms / min.cleanable.dirty.ratio / delete.retention.ms of their own) ---
log.cleaner.enable=true
log.cleaner.threads=1
log.cleaner.backoff.ms=500
log.cleaner.min.cleanable.ratio=0.01
log.cleaner.min.compaction.lag.ms=0
log.cleaner.delete.retention.ms=1000
log.cleaner.dedupe.buffer.size=33554432
log.segment.delete.delay.ms=1000
log.retention.check.interval.ms=5000
# Start LogManager's retention/flush/checkpoint tasks after 1 s instead of 30 s
# (a test-only setting per Kafka's docs).
log.initial.task.delay.ms=1000
# message.max.bytes stays at its default (1048588) so tests exercise the 1 MiB limit.
EOF
	if [ -n "$KAFKA_SASL_PORT" ]; then
		cat >>"$CONF/server.properties" <<EOF
# --- SASL_SSL listener (KAFKA_SASL_PORT): SASL PLAIN and SCRAM over TLS ---
# SCRAM-SHA-256/512 user $KAFKA_SASL_USER, added at format time (--add-scram);
# password checksum $(printf %s "$KAFKA_SASL_PASSWORD" | cksum | cut -d' ' -f1) (a new one reformats)
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_USER="$KAFKA_SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$TLSDIR/broker.keystore.p12
listener.name.sasl_ssl.ssl.keystore.password=$STORE_PASS
listener.name.sasl_ssl.ssl.key.password=$STORE_PASS
listener.name.sasl_ssl.ssl.truststore.type=PKCS12
listener.name.sasl_ssl.ssl.truststore.location=$TLSDIR/broker.truststore.p12
listener.name.sasl_ssl.ssl.truststore.password=$STORE_PASS
# A client certificate is verified when presented (mTLS), not required.
listener.name.sasl_ssl.ssl.client.auth=requested
EOF
	fi
	cat >"$CONF/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by scripts/kafka.sh. XML, because Kafka's own log4j2.yaml would need jackson-dataformat-yaml. -->
<Configuration status="WARN">
  <Appenders>
    <Console name="STDOUT" target="SYSTEM_OUT">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Logger name="org.apache.kafka.storage.internals.log.LogCleaner" level="INFO"/>
    <Root level="INFO">
      <AppenderRef ref="STDOUT"/>
    </Root>
  </Loggers>
</Configuration>
EOF
}

# A Kafka cluster id: 16 random bytes, base64url without padding, not starting with '-'.
new_cluster_id() {
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
		[ "${id:0:1}" != - ] && break
	done
	echo "$id"
}

format_storage() {
	if [ "$KAFKA_KEEP_DATA" = 1 ] && [ -f "$DATA/meta.properties" ]; then
		say "keeping data in $DATA"
		return
	fi
	rm -rf "$DATA"
	# A fresh start copies a pristine, just-formatted data dir kept from the
	# first start (formatting runs a JVM: 2-6 s here). It is made again when
	# server.properties changes. Fresh starts therefore share one cluster id.
	local tpl="$NODE/formatted"
	if [ -f "$tpl/meta.properties" ] && cmp -s "$CONF/server.properties" "$tpl.properties"; then
		cp -a "$tpl" "$DATA"
		return
	fi
	rm -rf "$tpl" "$tpl.properties"
	mkdir -p "$DATA"
	# --standalone: a single-node dynamic controller quorum (KIP-853), built from
	# controller.quorum.bootstrap.servers and the advertised CONTROLLER listener.
	local scram=()
	if [ -n "$KAFKA_SASL_PORT" ]; then
		scram=(--add-scram "SCRAM-SHA-256=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]"
			--add-scram "SCRAM-SHA-512=[name=$KAFKA_SASL_USER,password=$KAFKA_SASL_PASSWORD]")
	fi
	"$JAVA" -cp "$LIB/*" -Dlog4j2.configurationFile="$CONF/log4j2.xml" kafka.tools.StorageTool \
		format --standalone -t "$(new_cluster_id)" -c "$CONF/server.properties" "${scram[@]}" >"$NODE/format.log" 2>&1 ||
		{
			cat "$NODE/format.log" >&2
			die "formatting $DATA failed"
		}
	cp -a "$DATA" "$tpl.tmp" && mv "$tpl.tmp" "$tpl" && cp "$CONF/server.properties" "$tpl.properties"
}

# ---------------------------------------------------------------- process

# The PID from our pid file if that process is alive and is our broker.
our_pid() {
	local pid
	[ -f "$PIDFILE" ] || return 1
	pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	# Guard against PID reuse: the command line must be our kafka.Kafka with our config.
	if [ -r "/proc/$pid/cmdline" ]; then
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "kafka.Kafka $CONF/server.properties" || return 1
	fi
	echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/$KAFKA_HOST/$1") 2>/dev/null; }

# Send one request (bytes as printf escapes) to the client port and print the
# first $2 bytes of the response as unsigned decimals.
kafka_request() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf "$2" >&3 && head -c "$3" <&3' \
		"$KAFKA_HOST" "$KAFKA_PORT" "$1" "$2" 2>/dev/null | od -An -tu1 -v | tr -s ' \n' ' '
}

# Metadata v1 for no topics: true if the broker lists at least one broker.
metadata_ok() {
	# size=18 | api_key=3 v1 | correlation=7 | client_id "okrd" | topics: empty array
	local r b
	r=$(kafka_request '\x00\x00\x00\x12\x00\x03\x00\x01\x00\x00\x00\x07\x00\x04okrd\x00\x00\x00\x00' 12) || return 1
	read -r -a b <<<"$r"
	[ "${#b[@]}" -ge 12 ] && [ "${b[7]}" = 7 ] &&
		[ $((b[8] << 24 | b[9] << 16 | b[10] << 8 | b[11])) -ge 1 ]
}

# FindCoordinator v0 for a group: true when error_code is 0. The first call
# makes the broker create __consumer_offsets.
coordinator_ok() {
	# size=30 | api_key=10 v0 | correlation=9 | client_id "okrd" | group "okstream-ready"
	local r b
	r=$(kafka_request '\x00\x00\x00\x1e\x00\x0a\x00\x00\x00\x00\x00\x09\x00\x04okrd\x00\x0eokstream-ready' 10) || return 1
	read -r -a b <<<"$r"
	[ "${#b[@]}" -ge 10 ] && [ "${b[7]}" = 9 ] && [ "${b[8]}" = 0 ] && [ "${b[9]}" = 0 ]
}

print_env() {
	echo "# Kafka $KAFKA_VERSION bootstrap: $BOOTSTRAP"
	echo "export OKSTREAM_TEST_BROKERS=$BOOTSTRAP"
	if [ -n "$KAFKA_SASL_PORT" ]; then
		echo "# SASL_SSL listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 over TLS; throw-away CA)"
		echo "export OKSTREAM_TEST_SASL_BROKERS=$KAFKA_HOST:$KAFKA_SASL_PORT"
		echo "export OKSTREAM_TEST_TLS_CA=$TLSDIR/ca.pem"
		echo "export OKSTREAM_TEST_TLS_CERT=$TLSDIR/client.pem"
		echo "export OKSTREAM_TEST_TLS_KEY=$TLSDIR/client-key.pem"
		echo "export OKSTREAM_TEST_SASL_USER=$KAFKA_SASL_USER"
		echo "export OKSTREAM_TEST_SASL_PASSWORD=$KAFKA_SASL_PASSWORD"
	fi
}

wait_ready() {
	local pid=$1 t0=$SECONDS phase=log
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			say "broker exited during startup; last log lines:"
			tail -n 60 "$LOG" >&2
			rm -f "$PIDFILE"
			exit 1
		fi
		case $phase in
		log) grep -q "Kafka Server started" "$LOG" && phase=port ;;
		port) port_open "$KAFKA_PORT" && { [ -z "$KAFKA_SASL_PORT" ] || port_open "$KAFKA_SASL_PORT"; } && phase=metadata ;;
		metadata) metadata_ok && phase=coordinator ;;
		coordinator) coordinator_ok && phase=kcat ;;
		kcat)
			# An independent client's view, when kcat is installed.
			if ! command -v kcat >/dev/null || kcat -L -b "$BOOTSTRAP" -m 5 2>/dev/null | grep -q "broker 1 at $BOOTSTRAP"; then
				return 0
			fi
			;;
		esac
		if [ $((SECONDS - t0)) -ge "$KAFKA_START_TIMEOUT" ]; then
			say "not ready after ${KAFKA_START_TIMEOUT}s (waiting for: $phase); last log lines:"
			tail -n 60 "$LOG" >&2
			say "stopping it (pid $pid); full log: $LOG"
			stop >/dev/null 2>&1 || true
			exit 1
		fi
		sleep 0.2
	done
}

start() {
	local pid t0=$SECONDS
	if pid=$(our_pid); then
		say "already running (pid $pid) on $BOOTSTRAP"
		print_env
		return 0
	fi
	command -v "$JAVA" >/dev/null || die "Java 17+ ($JAVA) is needed"
	local jv jver
	jver=$("$JAVA" -version 2>&1)
	jv=$(sed -n 's/.*version "\([0-9]*\).*/\1/p' <<<"$jver" | head -n 1)
	[ "${jv:-0}" -ge 17 ] || die "Kafka 4.x needs Java 17+, $JAVA is version ${jv:-unknown}"
	local p
	for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" $KAFKA_SASL_PORT; do
		port_open "$p" && die "port $p on $KAFKA_HOST is in use by another process (set KAFKA_PORT / KAFKA_CONTROLLER_PORT / KAFKA_SASL_PORT)"
	done
	[ -f "$LIB/.complete" ] || fetch_jars
	mkdir -p "$NODE"
	[ -z "$KAFKA_SASL_PORT" ] || make_tls
	write_config
	format_storage
	[ -f "$LOG" ] && mv -f "$LOG" "$LOG.prev"
	local extra=()
	case $KAFKA_JIT in
	c1) extra+=(-XX:TieredStopAtLevel=1) ;;
	full) ;;
	*) die "KAFKA_JIT=$KAFKA_JIT: want c1 or full" ;;
	esac
	# Class-data sharing: a dynamic archive of the classes the broker loads
	# (about 50 MB) roughly halves JVM+broker startup. It is written at exit by
	# a broker started without one (stop() moves it into place), keyed by the
	# JVM build; a stale or unusable archive is ignored by the JVM (-Xshare:auto).
	rm -f "$NODE/cds.jsa.new" "$NODE/cds.target" "$PIDFILE"
	if [ "$KAFKA_CDS" = 1 ]; then
		local jsa
		jsa="$HOME_DIR/cds-$(cksum <<<"$jver" | cut -d' ' -f1).jsa"
		if [ -s "$jsa" ]; then
			extra+=("-XX:SharedArchiveFile=$jsa" -Xlog:cds=off -Xlog:cds+dynamic=off)
		else
			extra+=("-XX:ArchiveClassesAtExit=$NODE/cds.jsa.new" -Xlog:cds=off -Xlog:cds+dynamic=off)
			echo "$jsa" >"$NODE/cds.target"
		fi
	fi
	local user_opts=()
	read -r -a user_opts <<<"$KAFKA_JVM_OPTS"
	extra+=("${user_opts[@]}")
	# The inner shell records its own PID and execs java, so the pid file holds the JVM's PID.
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PIDFILE" \
		"$JAVA" "-Xmx$KAFKA_HEAP" "-Xms$KAFKA_HEAP" -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
		-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 \
		-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
		-Dkafka.logs.dir="$NODE" -Dlog4j2.configurationFile="$CONF/log4j2.xml" \
		"${extra[@]}" -cp "$LIB/*" kafka.Kafka "$CONF/server.properties" \
		</dev/null >"$LOG" 2>&1 9>&- &
	local i
	for i in $(seq 50); do
		[ -s "$PIDFILE" ] && break
		sleep 0.1
	done
	pid=$(cat "$PIDFILE" 2>/dev/null) || die "the broker did not start; see $LOG"
	say "started Kafka $KAFKA_VERSION (pid $pid), waiting until it serves clients on $BOOTSTRAP"
	wait_ready "$pid"
	if grep -qE "Java heap space|OutOfMemoryError|ERROR" "$LOG"; then
		say "warning: errors in $LOG:"
		grep -E "Java heap space|OutOfMemoryError|ERROR" "$LOG" | head -n 5 >&2
	fi
	say "ready after $((SECONDS - t0))s (pid $pid, log $LOG)"
	print_env
}

stop() {
	local pid i
	if ! pid=$(our_pid); then
		rm -f "$PIDFILE"
		say "not running"
		return 0
	fi
	local limit=$KAFKA_STOP_TIMEOUT
	if [ -f "$NODE/cds.target" ]; then
		# This JVM writes the class-data sharing archive as it exits: allow for it.
		say "writing the class-data sharing archive (once; can take 5-60 s on a busy machine)"
		limit=$((limit + 120))
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < limit * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	local killed=0
	if kill -0 "$pid" 2>/dev/null; then
		say "still running ${limit}s after SIGTERM, sending SIGKILL to pid $pid"
		kill -KILL "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		killed=1
	fi
	rm -f "$PIDFILE"
	# A class-data sharing archive written at exit (see start) goes into place
	# for later starts, unless the JVM was killed while writing it.
	if [ "$killed" = 0 ] && [ -s "$NODE/cds.jsa.new" ] && [ -f "$NODE/cds.target" ]; then
		mv -f "$NODE/cds.jsa.new" "$(cat "$NODE/cds.target")"
	fi
	rm -f "$NODE/cds.jsa.new" "$NODE/cds.target"
	say "stopped (pid $pid)"
}

status() {
	local pid
	if pid=$(our_pid); then
		echo "running: Kafka $KAFKA_VERSION pid $pid on $BOOTSTRAP (log $LOG)"
		return 0
	fi
	echo "not running"
	return 1
}

logs() {
	local follow=() n=100 a
	for a in "$@"; do
		case $a in
		-f) follow=(-F) ;;
		[0-9]*) n=$a ;;
		*) usage ;;
		esac
	done
	[ -f "$LOG" ] || die "no log yet ($LOG)"
	exec tail -n "$n" "${follow[@]}" "$LOG"
}

# Serialise start/stop of the same node (e.g. two test runners starting it at once).
lock() {
	mkdir -p "$NODE"
	if command -v flock >/dev/null; then
		exec 9>"$NODE/.lock"
		flock 9
	fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
start | restart)
	for a in "$@"; do
		case $a in
		--keep-data) KAFKA_KEEP_DATA=1 ;;
		*) usage ;;
		esac
	done
	lock
	[ "$cmd" = restart ] && stop
	start
	;;
stop)
	lock
	stop
	;;
status) status ;;
env) print_env ;;
logs) logs "$@" ;;
*) usage ;;
esac
