#!/usr/bin/env python3
"""Read okstream's prediction records back (an example consumer).

okstream run writes one prediction record per event to INPUT.predictions:
a msgpack map (with --output-format json, a JSON object with the same keys,
a non-finite score as null) with the event's id, key and label y (if it had one), and m,
one entry per model: n (name), s (score, computed before the model learned
from the event), d (decision +1/-1 for classifiers; 0 counts as a mistake),
u (labelled events the model had learned from before); a multi-class model
(schema version 4) has instead c (its class), ci (that class's index; y is
the label's index, so ci != y is a mistake) and pd (the top classes with
their probabilities). See the README's "Prediction records".

This consumer reads the topic from the beginning (a new consumer group each
run), keeps the records whose id starts with --id-prefix (one per event:
after a crash okstream may write a record again; the first is kept), and
prints each model's progressive mistake rate (classifiers: records with d)
or mean squared error (regression models: records without d) once --count
records have arrived, beside the trivial baseline on the same events, as
okstream computes it per partition: the running class prior's decision (the
majority of the labels seen so far, a tie a mistake; multi-class: the class
that first reached the largest count, over the multi-class records) or the
running mean of the labels (0 before the first). A model no better than its
baseline has
learnt nothing. It exits 1 if the records do not arrive within --timeout
seconds.

--format auto (the default) reads either encoding, each record by its first
byte ('{' is JSON); msgpack or json reads only that one.

Usage: python3 consumer.py --brokers localhost:9092 --topic events.predictions --count 2000 [--format json]
"""
import argparse
import json
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
    ap.add_argument("--format", default="auto", choices=["auto", "msgpack", "json"],
                    help="prediction record encoding: auto (by each record's first byte), msgpack or json "
                         "(okstream run --output-format json)")
    args = ap.parse_args()

    def decode(value):
        if args.format == "json" or args.format == "auto" and value.lstrip()[:1] == b"{":
            return json.loads(value)
        return msgpack.unpackb(value, raw=False)

    def score(m):  # JSON carries a non-finite score as null
        s = m.get("s")
        return float("nan") if s is None else s

    c = Consumer({
        "bootstrap.servers": args.brokers,
        "enable.metrics.push": False,  # no client telemetry (KIP-714) chatter
        "group.id": f"okstream-example-{uuid.uuid4()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    c.subscribe([args.topic])
    seen = {}
    labelled, mistakes = {}, {}  # classifiers, per model
    reg_n, reg_sq = {}, {}  # regression models, per model
    prior = {}  # per source partition: [labels, positive labels, sum of labels]
    base = {"n": 0, "mistakes": 0, "sq": 0.0}
    classes = {}  # multi-class records, per source partition: [count per class index, most frequent]
    multi = False
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
            rec = decode(msg.value())
            rid = rec.get("id", "")
            if not rid.startswith(args.id_prefix + "-") or rid in seen:
                continue
            seen[rid] = rec
            if len(seen) <= args.show:
                models = ", ".join(f"{m['n']}: class {m['c']!r} top {m['pd']}" if "ci" in m else f"{m['n']}: score {score(m):+.4f}"
                                   for m in rec["m"])
                print(f"consumer: {rid} key={rec.get('key')} y={rec.get('y')} {models}")
            y = rec.get("y")
            if y is None:
                continue
            if any("ci" in m for m in rec["m"]):  # multi-class: y is the label's class index
                multi = True
                for m in rec["m"]:
                    labelled[m["n"]] = labelled.get(m["n"], 0) + 1
                    if m["ci"] != y:
                        mistakes[m["n"]] = mistakes.get(m["n"], 0) + 1
                st = classes.setdefault(rec.get("p", 0), [{}, None])
                counts, best = st
                base["n"] += 1
                base["mistakes"] += best != y
                counts[y] = counts.get(y, 0) + 1
                if best is None or counts[y] > counts[best]:
                    st[1] = y
                continue
            for m in rec["m"]:
                name = m["n"]
                if "d" in m:
                    labelled[name] = labelled.get(name, 0) + 1
                    if m["d"] != y:
                        mistakes[name] = mistakes.get(name, 0) + 1
                else:
                    reg_n[name] = reg_n.get(name, 0) + 1
                    reg_sq[name] = reg_sq.get(name, 0.0) + (score(m) - y) ** 2
            # The baselines predict from the labels before this one (records
            # of a partition arrive in offset order).
            st = prior.setdefault(rec.get("p", 0), [0, 0, 0.0])
            n, pos, total = st
            decision = 1 if 2 * pos > n else (-1 if 2 * pos < n else 0)
            base["n"] += 1
            base["mistakes"] += decision != y
            base["sq"] += (y - (total / n if n else 0.0)) ** 2
            st[0], st[1], st[2] = n + 1, pos + (y > 0), total + y
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
    for name in sorted(reg_n):
        n = reg_n[name]
        print(f"consumer: model {name}: MSE {reg_sq[name] / n:.4f} over {n} labelled events")
    if base["n"]:
        n = base["n"]
        if labelled:
            k = base["mistakes"]
            if multi:
                print("consumer: (multi-class: the class prior over the multi-class records, the first of a "
                      "partition's warm-up being binary records)")
            print(f"consumer: baseline class prior: {k} mistakes in {n} labelled events ({100 * k / n:.1f} %)")
        if reg_n:
            print(f"consumer: baseline running mean: MSE {base['sq'] / n:.4f} over {n} labelled events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
