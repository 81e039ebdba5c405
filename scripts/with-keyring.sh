#!/bin/sh
# with-keyring.sh COMMAND [ARG...]
#
# Runs COMMAND inside a private D-Bus session that has a real Secret Service
# (gnome-keyring-daemon) with a throwaway, already unlocked "login" keyring.
# Nothing touches the caller's own keyring: HOME and the XDG folders point at
# a temporary directory that is removed afterwards. Go keeps using the real
# build and module caches, because GOPATH, GOCACHE, GOMODCACHE and GOENV are
# resolved before HOME moves and exported explicitly.
#
# It sets KOVARA_KEYRING_TEST=1, which turns on the Secret Service tests in
# storage/keyring_secretservice_test.go:
#
#   scripts/with-keyring.sh go test -race -count=1 ./storage/ -run Key -v
#
# Needs dbus-run-session, dbus-daemon and dbus-send (Debian: dbus,
# dbus-daemon, dbus-bin) and gnome-keyring-daemon (gnome-keyring); the Go
# tests also use secret-tool (libsecret-tools) to read entries back through
# a second, independent client.
set -eu

if [ "$#" -eq 0 ]; then
	echo "usage: $0 COMMAND [ARG...]" >&2
	exit 2
fi

for tool in dbus-run-session dbus-daemon dbus-send gnome-keyring-daemon; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$0: $tool not found; on Debian/Ubuntu: apt-get install -y dbus dbus-daemon dbus-bin gnome-keyring libsecret-tools" >&2
		exit 127
	fi
done

# Pin the Go locations before HOME changes; otherwise go would start a new,
# empty cache (and module download) inside the temporary HOME.
if command -v go >/dev/null 2>&1; then
	GOPATH=$(go env GOPATH)
	GOCACHE=$(go env GOCACHE)
	GOMODCACHE=$(go env GOMODCACHE)
	GOENV=$(go env GOENV)
	export GOPATH GOCACHE GOMODCACHE GOENV
fi
export PATH

KOVARA_KEYRING_TMP=$(mktemp -d "${TMPDIR:-/tmp}/kovara-keyring.XXXXXX")
trap 'rm -rf "$KOVARA_KEYRING_TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -m 700 "$KOVARA_KEYRING_TMP/home" "$KOVARA_KEYRING_TMP/data" \
	"$KOVARA_KEYRING_TMP/config" "$KOVARA_KEYRING_TMP/cache" "$KOVARA_KEYRING_TMP/run"

HOME=$KOVARA_KEYRING_TMP/home
XDG_DATA_HOME=$KOVARA_KEYRING_TMP/data     # gnome-keyring keeps keyrings/ here
XDG_CONFIG_HOME=$KOVARA_KEYRING_TMP/config
XDG_CACHE_HOME=$KOVARA_KEYRING_TMP/cache
XDG_RUNTIME_DIR=$KOVARA_KEYRING_TMP/run    # the daemon's control socket
KOVARA_KEYRING_TEST=1
KOVARA_KEYRING_TEST_PASSWORD=kovara-throwaway # of this temporary keyring only
export HOME XDG_DATA_HOME XDG_CONFIG_HOME XDG_CACHE_HOME XDG_RUNTIME_DIR \
	KOVARA_KEYRING_TEST KOVARA_KEYRING_TEST_PASSWORD KOVARA_KEYRING_TMP
# Never fall through to the caller's session bus or keyring.
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL SSH_AUTH_SOCK DISPLAY WAYLAND_DISPLAY

# dbus-daemon and the services it starts (a gcr-prompter that cannot open a
# display, for one) write to this log instead of the test output; it is
# shown only when COMMAND fails.
cat >"$KOVARA_KEYRING_TMP/dbus-daemon" <<'WRAPPER'
#!/bin/sh
exec dbus-daemon "$@" 2>>"$KOVARA_KEYRING_TMP/dbus-daemon.log"
WRAPPER
chmod +x "$KOVARA_KEYRING_TMP/dbus-daemon"

rc=0
dbus-run-session --dbus-daemon="$KOVARA_KEYRING_TMP/dbus-daemon" -- sh -c '
	set -u
	tmp=$KOVARA_KEYRING_TMP

	# --unlock reads the password from stdin, all of it up to EOF and
	# verbatim, then creates the "login" keyring with it, unlocks it and
	# makes it the default collection. An empty stdin does not mean an
	# empty password: gnome-keyring 42 then asks a GUI prompter instead,
	# which cannot run here, and no login keyring is created. So the
	# throwaway keyring gets a fixed, non-secret password (the tests use it
	# to unlock it again after locking it). --foreground keeps the daemon
	# our child, so it is stopped and reaped when COMMAND is done.
	printf "%s" "$KOVARA_KEYRING_TEST_PASSWORD" |
		gnome-keyring-daemon --foreground --unlock --components=secrets \
		>"$tmp/daemon.out" 2>"$tmp/daemon.err" &
	daemon=$!

	has_owner() {
		dbus-send --session --print-reply --dest=org.freedesktop.DBus \
			/org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
			string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"
	}
	i=0
	until has_owner; do
		i=$((i + 1))
		if [ "$i" -gt 100 ] || ! kill -0 "$daemon" 2>/dev/null; then
			echo "with-keyring.sh: gnome-keyring-daemon did not come up on the session bus" >&2
			cat "$tmp/daemon.err" >&2
			kill "$daemon" 2>/dev/null
			exit 1
		fi
		sleep 0.1
	done

	# Export whatever the daemon printed (NAME=value lines; with only the
	# secrets component gnome-keyring 42 prints nothing).
	while IFS= read -r line; do
		case $line in
		[A-Za-z_]*=*) export "$line" ;;
		esac
	done <"$tmp/daemon.out"

	# The default collection must be the unlocked login keyring, or writes
	# would try to prompt.
	alias=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets \
		/org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default |
		sed -n "s/.*object path \"\(.*\)\".*/\1/p")
	locked=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets "${alias:-/}" \
		org.freedesktop.DBus.Properties.Get \
		string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null |
		sed -n "s/.*boolean \(.*\)/\1/p")
	if [ "$alias" != /org/freedesktop/secrets/collection/login ] || [ "$locked" != false ]; then
		echo "with-keyring.sh: no unlocked default collection (alias=${alias:-none} locked=${locked:-?})" >&2
		cat "$tmp/daemon.err" >&2
		kill "$daemon" 2>/dev/null
		exit 1
	fi

	"$@"
	rc=$?
	kill "$daemon" 2>/dev/null
	wait "$daemon" 2>/dev/null
	exit "$rc"
' with-keyring "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
	for log in dbus-daemon.log daemon.err; do
		if [ -s "$KOVARA_KEYRING_TMP/$log" ]; then
			echo "with-keyring.sh: exit status $rc; $log:" >&2
			sed 's/^/  | /' "$KOVARA_KEYRING_TMP/$log" >&2
		fi
	done
fi
exit "$rc"
