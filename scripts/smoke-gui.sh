#!/bin/sh
# smoke-gui.sh [OUT_DIR]
#
# Starts kovara-desktop --demo in a real window under Xvfb (Mesa's software
# GL), waits until the demo run's result is on screen, takes screenshots of
# the live run and of the result, and fails if the result screenshot is
# blank. Needs xvfb, xauth, imagemagick and the GUI build packages (see
# .ci/run). The screenshots stay in OUT_DIR (default: a temp folder).
set -eu
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/kovara-desktop" ./cmd/kovara-desktop

export KOVARA_DESKTOP_HOME="$work/home"
export XDG_RUNTIME_DIR="$work/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
export LIBGL_ALWAYS_SOFTWARE=1

cat > "$work/inner.sh" <<'INNER'
#!/bin/sh
set -eu
"$1/kovara-desktop" --demo > "$1/app.out" 2> "$1/app.err" &
pid=$!
sleep 15
import -window root "$2/live-run.png"
i=0
until grep -q "result shown" "$1/app.out"; do
	i=$((i + 1))
	# The demo's default plan takes about two minutes (the simulator is
	# paced like an 8B model on one GPU); a loaded machine may double it.
	if [ "$i" -gt 420 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "smoke: no result after $i s; the app said:" >&2
		cat "$1/app.err" >&2
		kill "$pid" 2>/dev/null || true
		exit 1
	fi
	sleep 1
done
sleep 2
import -window root "$2/result.png"
kill "$pid"
INNER
chmod +x "$work/inner.sh"
xvfb-run -a -s "-screen 0 1180x820x24" dbus-run-session -- "$work/inner.sh" "$work" "$out" 2>"$work/xvfb.err" || {
	cat "$work/xvfb.err" >&2
	exit 1
}

# A blank or near-blank capture has almost no colours and no variation.
colours=$(convert "$out/result.png" -format "%k" info:)
stddev=$(convert "$out/result.png" -colorspace Gray -format "%[fx:standard_deviation]" info:)
echo "smoke: result screenshot has $colours colours, grey standard deviation $stddev ($out/result.png)"
if [ "$colours" -lt 64 ]; then
	echo "smoke: the result screenshot looks blank" >&2
	exit 1
fi
