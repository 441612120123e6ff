package acpside

import "testing"

// TestQuietNoteRead: the agent's note on an answer with no suggestion is read from its result's
// _meta, whatever the other keys of _meta hold; an answer without one has none.
func TestQuietNoteRead(t *testing.T) {
	for _, tc := range []struct {
		line     string
		envelope bool
		want     *Quiet
	}{
		{`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[],"_meta":{"other":"x","acp-lsp-bridge/quiet":{"rule":"undo","why":"it undoes the most recent edit"}}}}`, true, &Quiet{"undo", "it undoes the most recent edit"}},
		{`{"suggestions":[],"_meta":{"acp-lsp-bridge/quiet":{"rule":"rewrite","why":"w","extra":1},"n":[1,2]}}`, false, &Quiet{"rewrite", "w"}},
		{`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[]}}`, true, nil},
		{`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[],"_meta":{"acp-lsp-bridge/quiet":"not an object"}}}`, true, nil},
		{`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[],"_meta":{"acp-lsp-bridge/quiet":{}}}}`, true, nil},
		{`{"jsonrpc":"2.0","id":"nes-1","result":null,"x":"acp-lsp-bridge/quiet"}`, true, nil},
		{`not json acp-lsp-bridge/quiet`, true, nil},
	} {
		got := quietNote([]byte(tc.line), tc.envelope)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("quietNote(%s) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}
