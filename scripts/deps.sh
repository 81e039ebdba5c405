#!/bin/sh
# deps.sh [build|test|windows]
#
# Sets a machine up for Kovara Desktop: checks that Go is there and new
# enough, then that the system packages are installed that building the
# desktop app needs (a C compiler and the OpenGL, X11 and Wayland headers:
# the app is cgo), and with "test" also what the tests need (Xvfb, D-Bus,
# gnome-keyring, ImageMagick, Mesa's software OpenGL, OpenSSH's client,
# on Debian cmark-gfm, the GitHub Markdown renderer report's test pastes into;
# not its server, whose Debian package starts an sshd on every interface of
# a desktop: .ci/run installs it on CI's throwaway machine, and serverproc's
# ssh tests skip, saying why, where there is none), and with "windows"
# the MinGW cross-compiler. What is missing is installed with the system's
# package manager — apt-get (Debian, Ubuntu), dnf (Fedora) or pacman
# (Arch) — as root, or through sudo. Nothing already installed is touched,
# and the script says what it installs. Where it cannot install (no root,
# no sudo, another system) it stops with the command to run.
#
# make run, make test and .ci/run call it; it is safe to run again.
set -eu
what=${1:-build}
cd "$(dirname "$0")/.."

say() { printf 'deps: %s\n' "$*"; }

# Go itself is the one thing this script does not install.
need_go=$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' go.mod)
if ! command -v go >/dev/null 2>&1; then
	if [ -x /usr/local/go/bin/go ]; then
		PATH="/usr/local/go/bin:$PATH"
	else
		say "Go is not installed: Kovara Desktop needs Go $need_go or newer, from https://go.dev/dl/ (then run this again)."
		exit 1
	fi
fi
have_go=$(go env GOVERSION | sed 's/^go//')
older=$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -n 1)
if [ "$older" != "$need_go" ]; then
	say "Go $have_go is too old: Kovara Desktop needs Go $need_go or newer, from https://go.dev/dl/."
	exit 1
fi

# The packages, per package manager: what building the app needs, what the
# tests need besides, and the Windows cross-compiler.
if command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
	pm=apt-get
	build="gcc libc6-dev pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev libwayland-dev libxkbcommon-dev"
	test="git make ca-certificates xz-utils dbus gnome-keyring libsecret-tools xvfb xauth imagemagick libgl1-mesa-dri x11-utils openssh-client cmark-gfm"
	windows="gcc-mingw-w64-x86-64 wine64"
	installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
	install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"; }
	command_for() { echo "sudo apt-get install $*"; }
elif command -v dnf >/dev/null 2>&1; then
	pm=dnf
	build="gcc pkgconf-pkg-config mesa-libGL-devel libX11-devel libXcursor-devel libXrandr-devel libXinerama-devel libXi-devel libXxf86vm-devel wayland-devel libxkbcommon-devel"
	test="git make xz dbus-daemon gnome-keyring libsecret xorg-x11-server-Xvfb xorg-x11-xauth ImageMagick mesa-dri-drivers xorg-x11-utils openssh-clients"
	windows="mingw64-gcc wine"
	installed() { rpm -q "$1" >/dev/null 2>&1; }
	install() { $sudo dnf install -y "$@"; }
	command_for() { echo "sudo dnf install $*"; }
elif command -v pacman >/dev/null 2>&1; then
	pm=pacman
	build="gcc pkgconf mesa libx11 libxcursor libxrandr libxinerama libxi libxxf86vm wayland libxkbcommon"
	test="git make xz dbus gnome-keyring libsecret xorg-server-xvfb xorg-xauth imagemagick xorg-xdpyinfo openssh"
	windows="mingw-w64-gcc wine"
	installed() { pacman -Q "$1" >/dev/null 2>&1; }
	install() { $sudo pacman -S --needed --noconfirm "$@"; }
	command_for() { echo "sudo pacman -S --needed $*"; }
else
	say "this system has none of apt-get, dnf or pacman, so this script cannot install what the build needs."
	say "Install a C compiler, pkg-config and the development files of OpenGL, X11 (Xcursor, Xrandr, Xinerama, Xi, Xxf86vm), Wayland and xkbcommon, then run make again."
	exit 1
fi

case $what in
build) want=$build ;;
test) want="$build $test" ;;
windows) want="$build $windows" ;;
*)
	say "unknown set \"$what\": use build, test or windows"
	exit 2
	;;
esac

missing=""
for p in $want; do
	installed "$p" || missing="$missing $p"
done
missing=${missing# }
if [ -z "$missing" ]; then
	say "everything the $what needs is installed"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo="sudo"
elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
	sudo="sudo" # it will ask for the password
else
	say "Kovara Desktop's $what needs packages that are not installed, and this script cannot install them (it is not root and cannot use sudo). Run this, then make again:"
	echo
	echo "    $(command_for "$missing")"
	echo
	exit 1
fi

say "installing with $pm: $missing"
# shellcheck disable=SC2086 # one word per package
install $missing
