package acpside

import (
	"encoding/json"
	"fmt"

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
}

// DecodeSuggestions reads a nes/suggest result one suggestion at a time, so that one bad
// suggestion does not lose the others.
func DecodeSuggestions(raw json.RawMessage) ([]Suggestion, error) {
	var resp struct {
		Suggestions []json.RawMessage `json:"suggestions"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("nes/suggest result: %w", err)
	}
	out := make([]Suggestion, 0, len(resp.Suggestions))
	for _, r := range resp.Suggestions {
		out = append(out, decodeSuggestion(r))
	}
	return out, nil
}

func decodeSuggestion(r json.RawMessage) Suggestion {
	var head struct {
		ID   any    `json:"id"`
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(r, &head); err != nil {
		return Suggestion{Problem: "not a JSON object: " + err.Error()}
	}
	s := Suggestion{Kind: head.Kind}
	id, ok := head.ID.(string)
	if !ok || id == "" {
		s.Problem = "missing or non-string id"
		return s
	}
	s.ID = id
	var err error
	switch head.Kind {
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
		s.Problem = fmt.Sprintf("unknown suggestion kind %q", head.Kind)
		return s
	}
	if err != nil {
		s.Edit, s.Jump, s.Rename, s.SearchAndReplace = nil, nil, nil, nil
		s.Problem = fmt.Sprintf("malformed %s suggestion: %v", head.Kind, err)
	}
	return s
}
