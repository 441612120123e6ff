#!/bin/sh
# The tests built for Windows (windows/amd64) and run under Wine 10, as `make test` does when
# ACP_LSP_BRIDGE_WINE=1 (CI sets it up first: sh ../shared/tools/wine-tests.sh setup, as root).
#
# Every package's tests run one package at a time (each test binary starts Wine); the e2e tests
# run through the real binary, built for Windows beforehand into the Wine root (there is no go
# inside it). No -race: a Windows race build needs cgo. The editors the interop tests drive are
# Linux programs: those tests skip, each saying why, and the skips are counted at the end.
set -eu
cd "$(dirname "$0")/.."
WINE=${WINE_TESTS_SH:-$(cd .. && pwd)/shared/tools/wine-tests.sh}
R=${TRIXIE_ROOT:-${TMPDIR:-/tmp}/wine-trixie-root}
GO=${GO:-go}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The module must be this very folder inside the root (setup's bind mount): a mount left by an
# earlier clone at the same path would fail every package with "not mounted". Say it once.
if [ "$(stat -c %d:%i .)" != "$(stat -c %d:%i "$R$PWD" 2>/dev/null)" ]; then
	echo "windows tests: $PWD is not mounted at $R$PWD; run, as root: sh $WINE teardown && sh $WINE setup" >&2
	exit 1
fi
mkdir -p "$R/tmp/winbin"
for b in acp-lsp-bridge:./cmd/acp-lsp-bridge acp-test-agent:./internal/test/testagent/cmd/acp-test-agent acp-test-lsp:./internal/test/testlsp/cmd/acp-test-lsp; do
	GOOS=windows GOARCH=amd64 $GO build -o "$R/tmp/winbin/${b%%:*}.exe" "${b#*:}"
done

status=0
for pkg in $($GO list ./...); do
	# Linux programs and settings must not leak into the Windows run.
	run_pkg() {
		env -u NVIM -u EMACS -u HX -u CODE_SERVER -u CHROMIUM -u ACP_LSP_BRIDGE_REQUIRE_PEERS \
			ACP_LSP_BRIDGE_E2E_BIN='Z:\tmp\winbin' GOOS=windows GOARCH=amd64 \
			WINE_TESTS_SH="$WINE" $GO test -count=1 -v -timeout 20m -exec "sh $PWD/tools/wine-exec.sh" "$pkg" >"$out" 2>&1
	}
	ok=1
	run_pkg || ok=0
	# Wine's own server sometimes drops a client before the test binary has run a single test
	# ("wine client error: ... Connection reset by peer"): that says nothing of the tests, so the
	# package runs once more, and says so. A failure after a test ran is never retried.
	if [ $ok = 0 ] && ! grep -q -- '^=== RUN' "$out" && grep -q 'wine client error' "$out"; then
		echo "windows tests: $pkg: Wine dropped the test binary before any test ran ($(grep -m1 'wine client error' "$out")); running it again"
		ok=1
		run_pkg || ok=0
	fi
	if [ $ok = 0 ]; then
		status=1
		# The failures, or, when no test ran (Wine could not start it), the last lines.
		if grep -q -- '--- FAIL\|^panic' "$out"; then
			grep -v '^\s*{"level"' "$out" | grep -E '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+' | head -40
		else
			grep -v '^\s*{"level"' "$out" | tail -15
		fi
	fi
	grep -A3 '^wine-exec:' "$out" || true
	skipped=$(grep -c -- '--- SKIP' "$out" || true)
	passed=$(grep -c -- '--- PASS' "$out" || true)
	echo "windows/amd64 under Wine: $pkg: $passed passed, $skipped skipped"
	# Each skip's reason is the line before its "--- SKIP".
	grep -B1 -- '--- SKIP' "$out" | grep -v -- '--- \|^--$\|^=== ' | sed 's/^ *[a-z_]*_test\.go:[0-9]*: */    skipped: /' | sort | uniq -c | head -30
done
exit $status
