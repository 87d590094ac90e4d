#!/bin/sh
# Fetches Elec2 (M. Harries, "SPLICE-2 comparative evaluation: electricity
# pricing", UNSW technical report, 1999; 45,312 half-hourly records of the
# New South Wales electricity market, 1996-1998, label: price up/down
# relative to the last 24 hours) for `okstream reproduce drift`.
#
# Provenance: the copy scikit-multiflow 0.2.0 ships in its source
# distribution on PyPI (src/skmultiflow/data/datasets/elec.csv: the six
# normalised attributes period, nswprice, nswdemand, vicprice, vicdemand,
# transfer as feat_1..feat_6 — date and day dropped — and target 1 = UP,
# 0 = DOWN). The data is not committed; this script downloads the sdist
# from PyPI (the URL and SHA-256 the PyPI simple index lists), checks it,
# extracts the CSV and checks it too.
#
# Usage: scripts/fetch_elec2.sh [DEST]   (default: ../shared/datasets/elec2/elec.csv
# relative to the repository root, where `okstream reproduce drift` looks;
# OKSTREAM_DATA_ROOT/elec2/elec.csv when that is set). Needs curl (or
# wget), tar and sha256sum.
set -eu
SDIST_URL=https://files.pythonhosted.org/packages/1f/71/c3ef7339114523bee7c434ef207b333f5350d1182cebe1b3a308e7395f32/scikit-multiflow-0.2.0.tar.gz
SDIST_SHA256=9607853ac9f15602a26fc88658e2055684e635aad208e04c6538749732424284
MEMBER=scikit-multiflow-0.2.0/src/skmultiflow/data/datasets/elec.csv
CSV_SHA256=ebdfe5480ae25a43a7d054286135e3a9484697a2850d5158a333b1578c28bb97

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-${OKSTREAM_DATA_ROOT:-$root/../shared/datasets}/elec2/elec.csv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if command -v curl >/dev/null 2>&1; then
	curl -fsSL -o "$tmp/sdist.tar.gz" "$SDIST_URL"
else
	wget -q -O "$tmp/sdist.tar.gz" "$SDIST_URL"
fi
echo "$SDIST_SHA256  $tmp/sdist.tar.gz" | sha256sum -c - >/dev/null
tar -xzf "$tmp/sdist.tar.gz" -C "$tmp" "$MEMBER"
echo "$CSV_SHA256  $tmp/$MEMBER" | sha256sum -c - >/dev/null
mkdir -p "$(dirname "$dest")"
cp "$tmp/$MEMBER" "$dest"
echo "Elec2: $dest ($(($(wc -l <"$dest") - 1)) rows, sha256 $CSV_SHA256)"
