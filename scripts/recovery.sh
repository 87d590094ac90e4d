#!/usr/bin/env bash
# scripts/recovery.sh: how long an okstream run instance takes to be ready
# again (/readyz 200: in a live generation, every partition restored) after
# it was stopped with SIGKILL (a crash: no LeaveGroup, so the group waits
# for the dead member's session to expire), with SIGKILL and --member-file
# (the restart evicts the dead member), and with SIGTERM (drain,
# checkpoint, LeaveGroup), restarted at once, for each --session-timeout
# given (default "6s 10s"). Uses OKSTREAM_TEST_BROKERS, or starts
# scripts/kafka.sh's broker and stops it at the end. Prints one line per
# case. Not in CI (about a minute).
set -euo pipefail
sessions="${*:-6s 10s}"
source "$(dirname "$0")/with-broker.sh"
pid=""
cleanup() {
	[[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
	stop_broker
}
trap cleanup EXIT
brokers="$OKSTREAM_TEST_BROKERS"
topic="recovery-$(date +%s)"
"$bin" replay --brokers "$brokers" --data cod-rna --topic "$topic" --create-topic --partitions 6 --limit 60000 --quiet >/dev/null
port=18181
now() { date +%s.%N; }
ready() { curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; }
start() { # start an instance in the background (session timeout, extra flags...); sets pid
	local s="$1"
	shift
	"$bin" run "$@" --brokers "$brokers" --input "$topic" --dim 8 --group "$group" --model forks=forks:budget=100,sigma=8 \
		--metrics-addr "127.0.0.1:$port" --session-timeout "$s" --checkpoint-topic "$topic.ckpt" \
		--output "$topic.$group.predictions" --dead-letter "$topic.$group.dlq" >>"$dir/$group.log" 2>&1 &
	pid=$!
}
wait_ready() { until ready; do kill -0 "$pid" 2>/dev/null || { echo "recovery.sh: the instance exited; see $dir/$group.log" >&2; exit 1; }; sleep 0.02; done; }
for s in $sessions; do
	for mode in KILL KILL+member-file TERM; do
		group="g-${s}-${mode//+/-}"
		extra=()
		[[ "$mode" == *member-file ]] && extra=(--member-file "$dir/$group.member")
		start "$s" ${extra[@]+"${extra[@]}"}
		wait_ready
		sleep 2 # let it process and checkpoint
		t0=$(now)
		kill -"${mode%%+*}" "$pid"
		wait "$pid" 2>/dev/null || true
		t1=$(now)
		start "$s" ${extra[@]+"${extra[@]}"}
		wait_ready
		t2=$(now)
		printf 'session timeout %-4s SIG%-16s stop %.2f s, restart to ready %.2f s\n' "$s" "$mode" \
			"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
		kill -TERM "$pid"
		wait "$pid" 2>/dev/null || true
		pid=""
	done
done
