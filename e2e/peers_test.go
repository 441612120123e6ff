package e2e

import (
	"os"
	"runtime"
	"testing"
)

// skipWithoutPeer skips a test whose third-party peer is not installed, except where the peers
// are required (ACP_LSP_BRIDGE_REQUIRE_PEERS=1, as .ci/run sets): there a missing peer fails the
// test, so that CI never counts an interop test that did not run as passed.
// skipIfShort leaves a long test out of `go test -short`, the quick cycle; `make test` (and so CI)
// runs every test.
func skipIfShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: left out by -short", what)
	}
}

func skipWithoutPeer(t testing.TB, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skipf("not on Windows: the editors and agents these tests drive are installed for Linux here (%s)", why)
	}
	if os.Getenv("ACP_LSP_BRIDGE_REQUIRE_PEERS") == "1" {
		t.Fatalf("%s, and ACP_LSP_BRIDGE_REQUIRE_PEERS=1 requires every peer", why)
	}
	t.Skip(why)
}
