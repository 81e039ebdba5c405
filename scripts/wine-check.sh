#!/bin/sh
# wine-check.sh — runs the Windows CLI (bin/kovara-bench.exe) under Wine:
# a small demo whose results file the Linux CLI's validate accepts but for
# being simulated, and a selftest at 1 and 8 streams that must run and
# report. Needs wine64 (make deps-test installs it with make windows).
set -eu
cd "$(dirname "$0")/.."
exe=bin/kovara-bench.exe
[ -f "$exe" ] || { echo "wine-check: $exe is missing: run make windows first" >&2; exit 1; }
wine=$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2>/dev/null || true)
[ -n "$wine" ] || { echo "wine-check: Wine is not installed (scripts/deps.sh windows)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WINEPREFIX="$work/prefix" WINEDEBUG=-all KOVARA_DESKTOP_HOME='C:\kovara-home'
"$wine" wineboot --init >/dev/null 2>&1 || true
# Debian 12's Wine lacks bcryptprimitives.dll, which Go programs load at
# start-up; a stand-in built with MinGW (scripts/wine/bcryptprimitives.c)
# goes where Windows keeps the real one.
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
		scripts/wine/bcryptprimitives.c -ladvapi32
fi

go build -o "$work/kovara-bench" ./cmd/kovara-bench

echo "wine-check: kovara-bench.exe demo"
"$wine" "$exe" demo --concurrency 1,4 --requests 8 --warmup 2 --input-tokens 64 --output-tokens 16 -o 'C:\demo.json' >"$work/demo.out" 2>"$work/demo.err" || {
	cat "$work/demo.err" >&2
	echo "wine-check: the Windows demo failed" >&2
	exit 1
}
cat "$work/demo.out"
file="$WINEPREFIX/drive_c/demo.json"
[ -s "$file" ] || { echo "wine-check: the Windows demo wrote no results file" >&2; exit 1; }

# validate refuses it for being simulated, and for nothing else.
if "$work/kovara-bench" validate "$file" >"$work/validate.out" 2>"$work/validate.err"; then
	echo "wine-check: validate accepted a simulated file" >&2
	exit 1
fi
reasons=$(grep -c '^ *[-•]' "$work/validate.err" || true)
if ! grep -q 'simulat' "$work/validate.err" || [ "$reasons" -gt 1 ]; then
	cat "$work/validate.err" >&2
	echo "wine-check: validate refused the Windows demo's file for more than being simulated" >&2
	exit 1
fi
echo "wine-check: validate refuses it only for being simulated"

echo "wine-check: kovara-bench.exe selftest --levels 1,8"
"$wine" "$exe" selftest --levels 1,8 --tokens 8 --interval 10ms >"$work/self.out" 2>"$work/self.err" || {
	cat "$work/self.err" >&2
	echo "wine-check: the Windows selftest failed" >&2
	exit 1
}
cat "$work/self.out"
grep -q 'TTFT err p50' "$work/self.out" || { echo "wine-check: the Windows selftest reported no table" >&2; exit 1; }
echo "wine-check: ok"
