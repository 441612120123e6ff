#!/bin/sh
# vsix.sh: packages the VS Code extension in editors/vscode once per platform, each package with
# the bridge built for that platform inside (bin/acp-lsp-bridge, .exe on Windows), so that
# installing the extension is all a user has to do. `make vsix` runs it.
#
#   sh tools/vsix.sh -version VERSION [-bin DIR] [-out DIR] [-targets "linux-x64 ..."]
#
#   -version  the version stamped into the bridge (v1.2.3, or what `git describe` says); the
#             extension's version is the same without its "v", or, when that is not semver (a bare
#             commit), package.json's version with "-dev-" and it appended
#   -bin      where the bare binaries are: DIR/<goos>_<goarch>/acp-lsp-bridge[.exe], as `make dist`
#             leaves them (default dist/bin). A missing one is built there, as `make dist` builds
#             it; all are, when the one this machine runs says another version
#   -out      where the packages go (default dist/vscode): acp-lsp-bridge-<target>-<version>.vsix
#   -targets  the VS Code platforms (default: all six that are built)
#
# Needs go, node and npm (npm ci fetches the extension's dependencies from the npm registry), and
# @vscode/vsce: $VSCODE_TOOLS/.bin/vsce when VSCODE_TOOLS is set (the test peers), else vsce as npx
# finds it without installing anything, else vsce on PATH.
set -eu

die() {
	echo "vsix.sh: $*" >&2
	exit 1
}

version=
bin=dist/bin
out=dist/vscode
targets="linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64"
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value"
	case $1 in
	-version) version=$2 ;;
	-bin) bin=$2 ;;
	-out) out=$2 ;;
	-targets) targets=$2 ;;
	*) die "unknown flag $1 (see the comment at the top of tools/vsix.sh)" ;;
	esac
	shift 2
done
[ -n "$version" ] || die "-version is required (make vsix passes the Makefile's VERSION)"

# Paths given relative to where we were started; then work from the repository's root.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
bin=$(abs "$bin")
out=$(abs "$out")
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}

command -v "$GO" >/dev/null 2>&1 || die "$GO is not on PATH: the bridge is built with Go (https://go.dev/dl/)"
command -v node >/dev/null 2>&1 || die "node is not on PATH: the extension is built with Node.js 20 or later"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH: it comes with Node.js 20 or later"
if [ -n "${VSCODE_TOOLS:-}" ]; then
	[ -x "$VSCODE_TOOLS/.bin/vsce" ] || die "VSCODE_TOOLS is set to $VSCODE_TOOLS, which has no .bin/vsce: install @vscode/vsce there, or unset VSCODE_TOOLS"
	vsce="$VSCODE_TOOLS/.bin/vsce"
elif npx --no-install vsce --version >/dev/null 2>&1; then
	vsce="npx --no-install vsce"
elif command -v vsce >/dev/null 2>&1; then
	vsce=vsce
else
	die "vsce is not installed: npm install -g @vscode/vsce (or into a folder, and set VSCODE_TOOLS to its node_modules)"
fi

# The extension's version must be semver (vsce and VS Code refuse anything else).
semver='^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
extversion=${version#v}
if ! echo "$extversion" | grep -Eq "$semver"; then
	base=$(node -p 'require("./editors/vscode/package.json").version')
	extversion="$base-dev-$(echo "$version" | tr -c '0-9A-Za-z\n-' '-')"
fi

for target in $targets; do
	case $target in
	linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64 | win32-x64 | win32-arm64) ;;
	*) die "unknown target $target: one of linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64" ;;
	esac
done

# goplatform TARGET: the GOOS and GOARCH of a VS Code platform.
goplatform() {
	case $1 in
	linux-*) goos=linux ;;
	darwin-*) goos=darwin ;;
	win32-*) goos=windows ;;
	esac
	case $1 in
	*-x64) goarch=amd64 ;;
	*-arm64) goarch=arm64 ;;
	esac
	exe=
	[ "$goos" != windows ] || exe=.exe
}

# Every binary first. Those that `make dist` left are used as they are, unless the one this machine
# can run says it is another version (they all come from one run, and their build info does not
# record the stamp): then they are all built again. A missing one is built by `make dist`'s own
# code.
stale=
hostos=$("$GO" env GOHOSTOS)
hostfile="$bin/${hostos}_$("$GO" env GOHOSTARCH)/acp-lsp-bridge"
[ "$hostos" != windows ] || hostfile=$hostfile.exe
if [ -f "$hostfile" ]; then
	have=$("$hostfile" --version 2>/dev/null || true)
	if [ "$have" != "acp-lsp-bridge $version" ]; then
		echo "vsix.sh: $hostfile says \"$have\", not \"acp-lsp-bridge $version\": building every binary again"
		stale=1
	fi
fi
missing=
for target in $targets; do
	goplatform "$target"
	file="$bin/${goos}_$goarch/acp-lsp-bridge$exe"
	if [ -f "$file" ] && [ -z "$stale" ]; then
		echo "vsix.sh: $target: $file"
		continue
	fi
	echo "vsix.sh: $target: building $file"
	missing="$missing${missing:+,}$goos/$goarch"
done
# Built by the same code as the release archives' (tools/dist), so that they are the same bytes.
if [ -n "$missing" ]; then
	"$GO" run ./tools/dist -version "$version" -targets "$missing" -bin "$bin"
fi

# A copy of the extension, so that the source tree stays as it is: its own node_modules, out and
# bin, and the version set. vsce packages every file in it (but .vscodeignore's): vsce's output
# goes beside it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/acp-lsp-bridge-vsix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/extension
mkdir "$stage"
(cd editors/vscode && tar cf - --exclude=./node_modules --exclude=./out --exclude=./bin --exclude='*.vsix' .) | (cd "$stage" && tar xf -)
(cd "$stage" && node -e '
const fs = require("fs");
const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
p.version = process.argv[1];
fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");
' "$extversion")
echo "vsix.sh: npm ci"
(cd "$stage" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in a copy of editors/vscode (it needs the npm registry, or a cache that has the packages of package-lock.json)"

# The same bytes from the same commit: the archive's times are the commit's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 946684800)}
export SOURCE_DATE_EPOCH

mkdir -p "$out"
for target in $targets; do
	goplatform "$target"
	rm -rf "$stage/bin"
	mkdir "$stage/bin"
	cp "$bin/${goos}_$goarch/acp-lsp-bridge$exe" "$stage/bin/acp-lsp-bridge$exe"
	# vsce keeps a file's mode in the archive, and VS Code restores it where it can: executable.
	chmod 0755 "$stage/bin/acp-lsp-bridge$exe"
	vsix="$out/acp-lsp-bridge-$target-$extversion.vsix"
	# vsce runs vscode:prepublish (npm run compile) each time: tsc, a few seconds.
	(cd "$stage" && $vsce package --target "$target" --allow-missing-repository --skip-license --out "$vsix") >"$tmp/vsce.log" 2>&1 ||
		{ cat "$tmp/vsce.log" >&2; die "vsce package --target $target failed (above)"; }
	echo "vsix.sh: $vsix"
done
