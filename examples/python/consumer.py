#!/usr/bin/env python3
"""Read okstream's prediction records back (an example consumer).

okstream run writes one prediction record per event to INPUT.predictions:
a msgpack map with the event's id, key and label y (if it had one), and m,
one entry per model: n (name), s (score, computed before the model learned
from the event), d (decision +1/-1 for classifiers; 0 counts as a mistake),
u (labelled events the model had learned from before). See the README's
"Prediction records".

This consumer reads the topic from the beginning (a new consumer group each
run), keeps the records whose id starts with --id-prefix (one per event:
after a crash okstream may write a record again; the first is kept), and
prints each model's progressive mistake rate once --count records have
arrived. It exits 1 if they do not arrive within --timeout seconds.

Usage: python3 consumer.py --brokers localhost:9092 --topic events.predictions --count 2000
"""
import argparse
import sys
import time
import uuid

import msgpack
from confluent_kafka import Consumer, KafkaError


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", default="localhost:9092")
    ap.add_argument("--topic", default="events.predictions")
    ap.add_argument("--count", type=int, default=2000, help="prediction records to wait for")
    ap.add_argument("--id-prefix", default="py", help="only events whose id starts with PREFIX-")
    ap.add_argument("--timeout", type=float, default=120, help="seconds to wait for --count records")
    ap.add_argument("--show", type=int, default=3, help="records to print")
    args = ap.parse_args()

    c = Consumer({
        "bootstrap.servers": args.brokers,
        "enable.metrics.push": False,  # no client telemetry (KIP-714) chatter
        "group.id": f"okstream-example-{uuid.uuid4()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    c.subscribe([args.topic])
    seen = {}
    labelled, mistakes = {}, {}
    deadline = time.monotonic() + args.timeout
    try:
        while len(seen) < args.count and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() in (KafkaError._PARTITION_EOF, KafkaError.UNKNOWN_TOPIC_OR_PART):
                    continue  # the topic appears when okstream writes its first prediction
                print(f"consumer: {msg.error()}", file=sys.stderr)
                return 1
            rec = msgpack.unpackb(msg.value(), raw=False)
            rid = rec.get("id", "")
            if not rid.startswith(args.id_prefix + "-") or rid in seen:
                continue
            seen[rid] = rec
            if len(seen) <= args.show:
                models = ", ".join(f"{m['n']}: score {m['s']:+.4f}" for m in rec["m"])
                print(f"consumer: {rid} key={rec.get('key')} y={rec.get('y')} {models}")
            if rec.get("y") is None:
                continue
            for m in rec["m"]:
                labelled[m["n"]] = labelled.get(m["n"], 0) + 1
                if m.get("d", 0) != rec["y"]:
                    mistakes[m["n"]] = mistakes.get(m["n"], 0) + 1
    finally:
        c.close()
    if len(seen) < args.count:
        print(f"consumer: {len(seen)} of {args.count} predictions in {args.timeout:.0f} s "
              f"(is okstream run consuming the input topic?)", file=sys.stderr)
        return 1
    print(f"consumer: read {len(seen)} predictions from {args.topic}")
    for name in sorted(labelled):
        n, k = labelled[name], mistakes.get(name, 0)
        print(f"consumer: model {name}: {k} mistakes in {n} labelled events ({100 * k / n:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
