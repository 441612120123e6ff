package acpside

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain keeps the ACP SDK's connection diagnostics (slog's default logger) out of test output,
// and fails the package when a goroutine outlives its tests: every connection, agent and request
// must end.
func TestMain(m *testing.M) {
	if os.Getenv("ACPSIDE_TEST_DEAF_AGENT") == "1" {
		// An agent that neither reads nor ends when its input closes (process_internal_test.go).
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	goleak.VerifyTestMain(m)
}
