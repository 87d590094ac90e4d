#!/usr/bin/env python3
"""Send okstream events to a Kafka topic (an example producer).

Each event is one msgpack map, or with --format json one JSON object with
the same keys (json.dumps; okstream run --input-format json reads it; see
the README's "Event schema", or `go doc okstream/codec`): schema version v=1, an id, an entity key, dense
features x of length --dim and, for most events, a label y. The features
are drawn from a seeded generator; the target is a fixed random direction
plus noise, so a kernel model can learn it. --labels says how y is sent:

  pm1         (the default) the class, -1 or +1
  01          the class as 0 or 1
  bool        the class as false or true
  strings     the class as one of two strings, "ham" or "spam"
              (okstream run --positive spam makes "spam" the +1 class)
  classes     one of three string classes, "red", "green" or "blue": the
              largest of three random directions (plus noise), so okstream
              run without --model learns multi-class
  regression  the real-valued target itself (okstream learns regression)

--features named sends the features as a dict under "f" with "v": 3 (named
features; okstream run learns them with --dim at least the coordinates they
take, e.g. --dim 32 for --dim 8 here): the numbers "x0".."x7", one of which
is None (a missing value) one time in ten, a string "device" ("ios",
"android" or "web") that moves the target, and from half way a field "plan"
("free" or "pro") that older events lack (schema drift: nothing to
restart). See the README's "Event schema".

The topic must exist: with auto.create.topics.enable=false (scripts/kafka.sh,
docker-compose.yml) a record sent to a missing topic is never delivered, and
a producer that does not check its delivery reports never notices. This one
checks the topic first and every delivery report, and exits 1 if any record
was not acknowledged. Create the topics with

    okstream topics create --brokers localhost:9092 --input events --partitions 4

Usage: python3 producer.py --brokers localhost:9092 --topic events --count 2000 --dim 8 [--labels 01] [--format json] [--features named]
"""
import argparse
import json
import math
import random
import sys

import msgpack
from confluent_kafka import KafkaException, Producer


# The label of an event whose target (a fixed direction plus noise) is
# margin, for each --labels mode: the class (the sign of the margin) in one of
# the four binary encodings okstream accepts, or the real target itself.
LABELS = {
    "pm1": lambda margin: 1 if margin > 0 else -1,
    "01": lambda margin: 1 if margin > 0 else 0,
    "bool": lambda margin: margin > 0,
    "strings": lambda margin: "spam" if margin > 0 else "ham",
    # a smooth nonlinear target, not only -1/0/1: okstream learns regression
    "regression": lambda margin: round(2 * math.tanh(margin) + 0.5, 6),
    "classes": None,  # three string classes: see CLASSES in main
}

# The class names of --labels classes.
CLASSES = ["red", "green", "blue"]

# --features named: the string feature "device" and how it moves the target.
DEVICES = {"ios": 0.6, "android": 0.0, "web": -0.6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", default="localhost:9092")
    ap.add_argument("--topic", default="events")
    ap.add_argument("--count", type=int, default=2000, help="events to send")
    ap.add_argument("--dim", type=int, default=8, help="features per event (okstream run --dim)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--unlabelled", type=float, default=0.1, help="fraction of events sent without a label")
    ap.add_argument("--id-prefix", default="py", help="event ids are PREFIX-N")
    ap.add_argument("--labels", default="pm1", choices=sorted(LABELS),
                    help="how the label y is sent: pm1 (-1/+1), 01 (0/1), bool (false/true), "
                         "strings (two class names, \"ham\"/\"spam\"), classes (three class names, "
                         "\"red\"/\"green\"/\"blue\": multi-class) or regression (a real number)")
    ap.add_argument("--format", default="msgpack", choices=["msgpack", "json"],
                    help="record encoding: msgpack (okstream run's default) or json (okstream run --input-format json); "
                         "the events are the same either way")
    ap.add_argument("--features", default="dense", choices=["dense", "named"],
                    help="dense: x, a list of --dim numbers (\"v\": 1); named: a dict under \"f\" (\"v\": 3) of "
                         "numbers, a string, None now and then, and a field added half way")
    args = ap.parse_args()
    encode = (lambda ev: json.dumps(ev).encode()) if args.format == "json" else msgpack.packb

    p = Producer({
        "bootstrap.servers": args.brokers,
        "enable.metrics.push": False,  # no client telemetry (KIP-714) chatter
        "acks": "all",
        "enable.idempotence": True,
        # Give up on a record after 30 s instead of the default 5 minutes.
        "message.timeout.ms": 30000,
    })
    try:
        md = p.list_topics(args.topic, timeout=10)
    except KafkaException as e:
        print(f"producer: cannot reach {args.brokers}: {e}", file=sys.stderr)
        return 1
    t = md.topics.get(args.topic)
    if t is None or t.error is not None or not t.partitions:
        print(f"producer: topic {args.topic!r} does not exist on {args.brokers}; create it first, e.g.\n"
              f"  okstream topics create --brokers {args.brokers} --input {args.topic} --partitions 4",
              file=sys.stderr)
        return 1

    rng = random.Random(args.seed)
    w = [rng.uniform(-1, 1) for _ in range(args.dim)]
    # --labels classes: two more directions (drawn only in this mode, so the
    # other modes send the same events as before); the class is the largest
    # of the three scores.
    ws = [w] + [[rng.uniform(-1, 1) for _ in range(args.dim)] for _ in range(2)] if args.labels == "classes" else None
    failed = []

    def report(err, msg):
        if err is not None:
            failed.append(err)

    for i in range(args.count):
        x = [rng.uniform(-1, 1) for _ in range(args.dim)]
        margin = sum(a * b for a, b in zip(w, x)) + rng.gauss(0, 0.1)
        ev = {"v": 1, "id": f"{args.id_prefix}-{i}", "key": f"user-{i % 50}", "x": x}
        if args.features == "named":
            # Drawn only in this mode, so the dense events stay as they were.
            f = {f"x{j}": v for j, v in enumerate(x)}
            if rng.random() < 0.1:
                f[f"x{rng.randrange(args.dim)}"] = None  # a missing value
            device = rng.choice(sorted(DEVICES))
            f["device"] = device
            margin += DEVICES[device]
            if i >= args.count // 2:
                f["plan"] = rng.choice(["free", "pro"])  # a field added half way
            ev = {"v": 3, "id": ev["id"], "key": ev["key"], "f": f}
        if ws is not None:
            scores = [sum(a * b for a, b in zip(v, x)) + rng.gauss(0, 0.1) for v in ws]
            label = CLASSES[scores.index(max(scores))]
        if rng.random() >= args.unlabelled:
            ev["y"] = label if ws is not None else LABELS[args.labels](margin)
        while True:
            try:
                p.produce(args.topic, key=ev["key"].encode(), value=encode(ev), on_delivery=report)
                break
            except BufferError:  # the local queue is full: let it drain
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    if failed or left:
        print(f"producer: {len(failed)} events refused ({failed[0] if failed else ''}), {left} unacknowledged",
              file=sys.stderr)
        return 1
    print(f"producer: sent {args.count} events to {args.topic} (dim {args.dim}, labels {args.labels}, {args.format}, {args.features} features)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
