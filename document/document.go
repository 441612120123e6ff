// Package document mirrors the documents the editor has open: versioned text, LSP content changes
// applied in order, and immutable snapshots that requests take before they run asynchronously.
//
// Documents are keyed by their URI exactly as the editor sent it, so the bridge can echo it back
// byte for byte.
package document

import (
	"fmt"
	"sort"
	"sync"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Change is one LSP content change: Text replaces Range, or the whole document when Range is nil.
type Change struct {
	Range *encoding.Range
	Text  string
}

// Applied is one change as it was applied: the byte offsets [Start, End) in the text before the
// change (Before), replaced by Text. Full is set for a change that replaced the whole text.
type Applied struct {
	Before     *encoding.Mapper
	Start, End int
	Text       string
	Full       bool
}

// Snapshot is an immutable view of a document at one version.
type Snapshot struct {
	URI        string
	LanguageID string
	Version    int
	Mapper     *encoding.Mapper
}

// Text returns the snapshot's text.
func (s *Snapshot) Text() string { return s.Mapper.Text() }

// Apply applies LSP content changes in order: each range refers to the text produced by the
// previous change, and a change without a range replaces everything. Positions are in encoding k.
// It returns the final mapper and each change as applied; on error nothing is applied.
func Apply(m *encoding.Mapper, changes []Change, k encoding.Kind) (*encoding.Mapper, []Applied, error) {
	applied := make([]Applied, 0, len(changes))
	for i, c := range changes {
		if c.Range == nil {
			applied = append(applied, Applied{Before: m, Start: 0, End: m.Len(), Text: c.Text, Full: true})
			m = encoding.NewMapper(c.Text)
			continue
		}
		start, end, err := m.RangeOffsets(*c.Range, k)
		if err != nil {
			return nil, nil, fmt.Errorf("content change %d: %w", i, err)
		}
		applied = append(applied, Applied{Before: m, Start: start, End: end, Text: c.Text})
		m = m.Edit(start, end, c.Text)
	}
	return m, applied, nil
}

// Store holds the open documents. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	docs map[string]*Snapshot
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{docs: make(map[string]*Snapshot)} }

// Open records a newly opened document and returns its snapshot. Opening a document that is already
// open replaces it; reopened reports that.
func (s *Store) Open(uri, languageID string, version int, text string) (snap *Snapshot, reopened bool) {
	snap = &Snapshot{URI: uri, LanguageID: languageID, Version: version, Mapper: encoding.NewMapper(text)}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, reopened = s.docs[uri]
	s.docs[uri] = snap
	return snap, reopened
}

// ErrNotOpen reports a document the editor has not opened.
var ErrNotOpen = fmt.Errorf("document is not open")

// Change applies changes to an open document and records version. It returns the snapshot before
// and after and the changes as applied. On error the document is left as it was.
func (s *Store) Change(uri string, version int, changes []Change, k encoding.Kind) (before, after *Snapshot, applied []Applied, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, ok := s.docs[uri]
	if !ok {
		return nil, nil, nil, ErrNotOpen // the caller names the document
	}
	m, applied, err := Apply(before.Mapper, changes, k)
	if err != nil {
		return before, nil, nil, err
	}
	after = &Snapshot{URI: uri, LanguageID: before.LanguageID, Version: version, Mapper: m}
	s.docs[uri] = after
	return before, after, applied, nil
}

// Close forgets a document and returns its last snapshot.
func (s *Store) Close(uri string) (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.docs[uri]
	delete(s.docs, uri)
	return snap, ok
}

// Get returns the current snapshot of a document.
func (s *Store) Get(uri string) (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.docs[uri]
	return snap, ok
}

// All returns the current snapshots of every open document, ordered by URI.
func (s *Store) All() []*Snapshot {
	s.mu.Lock()
	out := make([]*Snapshot, 0, len(s.docs))
	for _, snap := range s.docs {
		out = append(out, snap)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}
