package lspside

import (
	"testing"
	"time"
)

// TestDelayCountsFromTheLastChange: the delay is counted from the document's last change, not
// from the editor's request: an editor that waits 200 ms of its own before it asks (Neovim) gets
// the agent asked 300 ms after the last key with a delay of 300 ms, not 500 ms after it.
func TestDelayCountsFromTheLastChange(t *testing.T) {
	key := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	asked := key.Add(200 * time.Millisecond) // the editor's own wait
	cases := []struct {
		name     string
		changed  time.Time
		delay    time.Duration
		burst    bool
		coalesce time.Duration
		want     time.Duration
	}{
		{"the editor's wait overlaps the delay", key, 300 * time.Millisecond, false, 0, 100 * time.Millisecond},
		{"a delay shorter than the editor's wait: at once", key, 150 * time.Millisecond, false, 0, -50 * time.Millisecond},
		{"no change since the document was opened: from the request", time.Time{}, 300 * time.Millisecond, false, 0, 300 * time.Millisecond},
		{"a burst still waits its coalescing from the request", key, 150 * time.Millisecond, true, 40 * time.Millisecond, 40 * time.Millisecond},
		{"no delay", key, 0, false, 0, -200 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := stillWait(asked, tc.changed, asked, tc.delay, tc.burst, tc.coalesce); got != tc.want {
			t.Errorf("%s: waits %v, want %v", tc.name, got, tc.want)
		}
	}
}
