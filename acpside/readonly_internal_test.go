package acpside

import (
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestReadOnlyMode: the mode a prompted agent is put in, by the modes each agent lists.
func TestReadOnlyMode(t *testing.T) {
	modes := func(ms ...[2]string) *acp.SessionModeState {
		s := &acp.SessionModeState{}
		for _, m := range ms {
			s.AvailableModes = append(s.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m[0]), Name: m[1]})
		}
		return s
	}
	for _, c := range []struct {
		name  string
		modes *acp.SessionModeState
		want  string
	}{
		{"a read-only id", modes([2]string{"read-only", "Read Only"}, [2]string{"auto", "Default"}, [2]string{"full-access", "Full Access"}), "read-only"},
		{"claude-agent-acp's modes (docs/real-agents.md)", modes([2]string{"default", "Default"}, [2]string{"acceptEdits", "Accept Edits"}, [2]string{"plan", "Plan Mode"}, [2]string{"dontAsk", "Don't Ask"}), "plan"},
		{"read only by name", modes([2]string{"m1", "Write"}, [2]string{"m2", "Read only"}), "m2"},
		{"ask", modes([2]string{"code", "Code"}, [2]string{"ask", "Ask"}), "ask"},
		{"words whole", modes([2]string{"task", "Task Runner"}, [2]string{"planet", "Planet"}), ""},
		{"don't ask is not ask", modes([2]string{"default", "Default"}, [2]string{"dontAsk", "Don't Ask"}), ""},
		{"none listed", nil, ""},
	} {
		got, ok := readOnlyMode(c.modes)
		if string(got) != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
}
