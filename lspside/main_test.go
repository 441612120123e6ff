package lspside_test

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain keeps the ACP SDK's connection diagnostics (slog's default logger) out of test output,
// and fails the package when a goroutine outlives its tests: every connection, agent and request
// must end.
func TestMain(m *testing.M) {
	if os.Getenv(crashingAgentEnv) != "" {
		crashingAgent() // this binary started as an agent (crash_message_test.go)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	goleak.VerifyTestMain(m)
}
