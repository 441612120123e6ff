package acpside

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// Suggestion is one suggestion from nes/suggest. Exactly one of the kind fields is set for a kind
// the bridge knows; for an unknown or malformed one none is, and Problem says why.
type Suggestion struct {
	ID   string
	Kind string

	Edit             *acp.UnstableNesSuggestionEdit
	Jump             *acp.UnstableNesSuggestionJump
	Rename           *acp.UnstableNesSuggestionRename
	SearchAndReplace *acp.UnstableNesSuggestionSearchAndReplace

	Problem string
	// Unknown is set for a kind the bridge does not know (with Problem): it is ignored, not an
	// error.
	Unknown bool
}

// DecodeSuggestions reads a nes/suggest result one suggestion at a time, so that one bad
// suggestion does not lose the others. A suggestion that repeats the id of an earlier one in the
// same answer is returned without its id (and a Problem): the id is the earlier one's, and must
// end once.
func DecodeSuggestions(raw json.RawMessage) ([]Suggestion, error) {
	var resp struct {
		Suggestions []json.RawMessage `json:"suggestions"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("nes/suggest result: %w", err)
	}
	out := make([]Suggestion, 0, len(resp.Suggestions))
	seen := map[string]bool{}
	for _, r := range resp.Suggestions {
		s := decodeSuggestion(r)
		if s.ID != "" && seen[s.ID] {
			s = Suggestion{Kind: s.Kind, Problem: fmt.Sprintf("the id %q appears earlier in the same answer; this suggestion is dropped", s.ID)}
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out, nil
}

func decodeSuggestion(r json.RawMessage) Suggestion {
	var head struct {
		ID json.RawMessage `json:"id"`
		// SuggestionID is ACP's protocol version 2 draft's name for the id.
		SuggestionID json.RawMessage `json:"suggestionId"`
		Kind         any             `json:"kind"`
	}
	if kind := jsonKind(r); kind != "an object" {
		return Suggestion{Problem: kind + ", not a JSON object"}
	}
	if err := json.Unmarshal(r, &head); err != nil {
		return Suggestion{Problem: "not a JSON object: " + err.Error()}
	}
	var s Suggestion
	if len(head.ID) == 0 {
		head.ID = head.SuggestionID
	}
	// The id first, so that a suggestion that is wrong in any other way can still end.
	var id string
	if !utf8.Valid(head.ID) || json.Unmarshal(head.ID, &id) != nil || id == "" {
		s.Problem = "missing or non-string id"
		if kind, ok := head.Kind.(string); ok {
			s.Kind = kind
		}
		return s
	}
	s.ID = id
	kind, ok := head.Kind.(string)
	if !ok {
		s.Problem = "the kind is not a string"
		return s
	}
	s.Kind = kind
	// JSON text is UTF-8: raw bytes that are not would read as U+FFFD, text the agent never meant.
	if !utf8.Valid(r) {
		s.Problem = fmt.Sprintf("the %s suggestion is not valid UTF-8", kind)
		return s
	}
	var err error
	switch kind {
	case "edit":
		s.Edit = new(acp.UnstableNesSuggestionEdit)
		err = json.Unmarshal(r, s.Edit)
	case "jump":
		s.Jump = new(acp.UnstableNesSuggestionJump)
		err = json.Unmarshal(r, s.Jump)
	case "rename":
		s.Rename = new(acp.UnstableNesSuggestionRename)
		err = json.Unmarshal(r, s.Rename)
	case "searchAndReplace":
		s.SearchAndReplace = new(acp.UnstableNesSuggestionSearchAndReplace)
		err = json.Unmarshal(r, s.SearchAndReplace)
	default:
		// Suggestion kinds are an open enum (ACP's protocol version 2 draft): a kind of a later
		// version is not an error.
		s.Unknown = true
		s.Problem = fmt.Sprintf("unknown suggestion kind %q", kind)
		return s
	}
	if err != nil {
		s.Edit, s.Jump, s.Rename, s.SearchAndReplace = nil, nil, nil, nil
		s.Problem = fmt.Sprintf("malformed %s suggestion: %v", kind, err)
	}
	return s
}

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch c := b[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return "a number"
	}
}
