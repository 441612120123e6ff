#!/bin/sh
# go test -exec wrapper around ../shared/tools/wine-tests.sh exec: runs the Windows test binary
# under Wine, then reports any Windows program of the project (under winbin) still running once
# the test binary has exited, and ends it. Under Wine, such a process holds go test's output pipe
# (go test would wait a minute and fail the package without saying which process it was).
WINE=${WINE_TESTS_SH:?}
out=$(mktemp)
sh "$WINE" exec "$@" >"$out" 2>&1
rc=$?
cat "$out"
rm -f "$out"
sleep 1
left=$(ps -eo pid=,lstart=,args= | grep 'winbin.acp-' | grep -v grep)
if [ -n "$left" ]; then
	echo "wine-exec: still running after the test binary exited (ended now):"
	printf '%s\n' "$left" | sed 's/^/    /'
	printf '%s\n' "$left" | awk '{print $1}' | xargs -r kill -9
fi
exit $rc
