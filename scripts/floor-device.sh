#!/usr/bin/env bash
# scripts/floor-device.sh: the pipeline floor (issue 41) on a machine with
# many cores and no Go: events per CPU-second of pass-through, FOGD and auto
# with 2 and with all cores, from one static test binary and the embedded
# broker (in a child process, so okstream's CPU is measured alone); and
# issue 43's serving with learning beside it on 4 cores (a core or two for
# the pipeline and its broker, one for the server, one for the client),
# which the 2-core VM cannot give both at once.
#
#   scripts/floor-device.sh build     # here: writes zzscratch/device/consumer.test.gz
#   scripts/floor-device.sh run OUT   # there (e.g. through the device tool,
#                                     # carrying zzscratch/device): tables and
#                                     # CPU profiles into OUT
#
# The streams are BenchmarkPipelineFloor's: 595,350 events in 16 partitions
# for pass-through and FOGD, 59,535 for auto.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=zzscratch/device
case "${1:-}" in
build)
  mkdir -p "$dir"
  CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$dir/consumer.test" ./consumer
  CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$dir/serve.test" ./serve
  gzip -f "$dir/consumer.test" "$dir/serve.test"
  ls -la "$dir"
  ;;
run)
  out=${2:?usage: $0 run OUT}
  mkdir -p "$out"
  [ -x "$dir/consumer.test" ] || gunzip -kf "$dir/consumer.test.gz"
  [ -x "$dir/serve.test" ] || gunzip -kf "$dir/serve.test.gz"
  echo "== serving on 4 cores (issue 43)"
  for b in 'ServeBatch 100x' 'LearningWithServing 1x'; do
    set -- $b
    taskset -c 0-3 "$dir/serve.test" -test.run '^$' -test.bench "$1" \
      -test.benchtime "$2" -test.cpu 4 -test.count 3 2>&1 | grep -E '^Benchmark|FAIL|panic' | tee -a "$out/serve.txt"
  done
  cores=$(nproc)
  for cpus in 2 "$cores"; do
    last=$((cpus - 1))
    for b in passthrough fogd auto; do
      echo "== $b on $cpus cores"
      OKSTREAM_BENCH_CPUPROFILE="$out/c$cpus" \
        taskset -c "0-$last" "$dir/consumer.test" -test.run '^$' -test.bench "PipelineFloor/$b\$" \
        -test.benchtime 1x -test.cpu "$cpus" 2>&1 | grep -E '^Benchmark|FAIL|panic' | tee -a "$out/floor.txt"
    done
  done
  ;;
*)
  echo "usage: $0 build | run OUT" >&2
  exit 2
  ;;
esac
