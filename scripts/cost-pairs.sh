#!/usr/bin/env bash
# What a streamed token costs three clients on one server and load, side by
# side (docs/performance.md, "What the client costs" and "The floor"):
# kovara-bench run, scripts/readfloor (the floor: read each chunk, nothing
# else) and scripts/pyharness.py (a Python httpx client), one after
# another, ROUNDS times. Each one's whole-process CPU (user + system, GNU
# time) per output token, and the Python client's over the other two.
#
#   scripts/cost-pairs.sh URL MODEL CONCURRENCY REQUESTS [ROUNDS]
#   scripts/cost-pairs.sh http://127.0.0.1:8080 models/tiny.gguf 8 256 3
#
# Needs GNU time (Debian: time), Go, and a python3 with httpx (Debian:
# python3-httpx; PYTHON=/usr/bin/python3 picks one). Plain http only.
# Run it on an otherwise idle machine: every other process's wakeups move
# the numbers.
set -euo pipefail

if [ $# -lt 4 ]; then
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
url=$1 model=$2 conc=$3 reqs=$4 rounds=${5:-3}
py=${PYTHON:-python3}
tokens=256 words=770

[ -x /usr/bin/time ] || { echo "cost-pairs: GNU time is missing (Debian: apt-get install time)" >&2; exit 2; }
"$py" -c 'import httpx' 2>/dev/null || { echo "cost-pairs: $py has no httpx (Debian: apt-get install python3-httpx; or set PYTHON)" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/kovara-bench" ./cmd/kovara-bench && go build -o "$work/readfloor" ./scripts/readfloor)

# cpu FILE: user + system seconds from GNU time's "%U %S" line.
cpu() { awk 'END { print $1 + $2 }' "$1"; }
per_token() { awk -v c="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.1f", c / t * 1e6; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f", a / b; else print "-" }'; }

printf '%-6s %14s %14s %14s %16s %16s\n' round "kovara us/tok" "floor us/tok" "python us/tok" "python/kovara" "python/floor"
for round in $(seq 1 "$rounds"); do
	# Its own library in the scratch folder: measuring runs stay out of the
	# user's. What it says goes to a file, shown when it fails.
	XDG_DATA_HOME="$work/data" /usr/bin/time -f '%U %S' -o "$work/t.k" "$work/kovara-bench" run --endpoint "$url" --model "$model" \
		--concurrency "$conc" --requests "$reqs" --output-tokens "$tokens" --warmup 0 --quiet -o "$work/k.json" >/dev/null 2>"$work/k.err" ||
		{ cat "$work/k.err" >&2; exit 1; }
	ktok=$("$py" -c 'import json,sys; m=json.load(open(sys.argv[1]))["runs"][0]["metrics"]; print(round(m["requests_ok"]*m["output_tokens_mean"]))' "$work/k.json")

	/usr/bin/time -f '%U %S' -o "$work/t.f" "$work/readfloor" --url "$url" --model "$model" \
		--concurrency "$conc" --requests "$reqs" --output-tokens "$tokens" --input-words "$words" >"$work/f.out"
	ftok=$(awk '/^requests/ { for (i = 1; i < NF; i++) if ($i == "tokens") print $(i + 1) }' "$work/f.out")

	/usr/bin/time -f '%U %S' -o "$work/t.p" "$py" "$root/scripts/pyharness.py" --url "$url" --model "$model" \
		--concurrency "$conc" --requests "$reqs" --output-tokens "$tokens" --input-words "$words" >"$work/p.json"
	ptok=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens"])' "$work/p.json")

	k=$(per_token "$(cpu "$work/t.k")" "$ktok")
	f=$(per_token "$(cpu "$work/t.f")" "$ftok")
	p=$(per_token "$(cpu "$work/t.p")" "$ptok")
	printf '%-6s %14s %14s %14s %16s %16s\n' "$round" "$k" "$f" "$p" "$(ratio "$p" "$k")" "$(ratio "$p" "$f")"
done
