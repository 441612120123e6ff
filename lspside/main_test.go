package lspside_test

import (
	"io"
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

// TestMain keeps the ACP SDK's connection diagnostics (slog's default logger) out of test output,
// and fails the package when a goroutine outlives its tests: every connection, agent and request
// must end.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	goleak.VerifyTestMain(m)
}
