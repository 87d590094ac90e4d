#!/usr/bin/env python3
"""Golden bytes of schema version 3 (named features, "f") for golden_named_test.go.

Run: python3 golden_named.py > golden_named.txt   (needs the msgpack package; tested with msgpack 1.x)

Prints, for each event, the msgpack bytes as hex (packb with use_bin_type=True,
keys in the order written) and the JSON text Python's json.dumps writes for the
same dict (its default separators, NaN written as NaN). The Go test checks
DecodeEvent and DecodeEventJSON against the Event each case names, and
AppendEvent against the "canonical" cases, byte for byte. CI does not run
Python: the output is pasted into the test.
"""
import json
import math
import msgpack

cases = [
    # What an upstream service publishes: numbers, a categorical string, a
    # bool, None and NaN (missing), a Python int.
    ("named_python", {"v": 3, "id": "evt-7", "key": "user-7",
                      "f": {"amount": 12.5, "country": "FR", "device": "ios", "age": None,
                            "is_new": True, "n_items": 3, "score": math.nan}, "y": 1}, {}),
    # The same event as AppendEvent writes it: numbers as float64, NaN as nil.
    ("named_canonical", {"v": 3, "id": "evt-7", "key": "user-7",
                         "f": {"amount": 12.5, "country": "FR", "device": "ios", "age": None,
                               "is_new": True, "n_items": 3.0, "score": None}, "y": 1.0}, {}),
    # Every feature absent: an empty map.
    ("named_empty", {"v": 3, "ts": 1700000000123, "f": {}, "y": "click"}, {}),
    # A feedback event in version 3.
    ("feedback_v3", {"v": 3, "key": "u-1", "ref": "imp-1", "y": True}, {}),
    # A bytes name (bin), float32 values, negative and large ints, non-ASCII.
    ("named_bin_f32", {"v": 3, "f": {b"bin_name": -5, "f32": 0.5, "big": 2**40, "caf\u00e9": "\u00fc\u00df"}},
     {"use_single_float": True}),
]

for name, obj, opts in cases:
    b = msgpack.packb(obj, use_bin_type=True, **opts)
    print(f"{name} msgpack {b.hex()}")
    try:
        j = json.dumps({k: ({(kk.decode() if isinstance(kk, bytes) else kk): vv for kk, vv in v.items()}
                            if isinstance(v, dict) else v) for k, v in obj.items()})
        print(f"{name} json {j}")
    except TypeError as e:
        print(f"{name} json - ({e})")
print("msgpack", msgpack.version)
