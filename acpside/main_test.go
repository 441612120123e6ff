package acpside

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain keeps the ACP SDK's connection diagnostics (slog's default logger) out of test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}
