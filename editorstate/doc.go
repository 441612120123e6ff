// Package editorstate records what the user does in the editor, cheaply and with bounded memory,
// and assembles the context of an ACP nes/suggest request from it: openFiles, recentFiles,
// editHistory, userActions, diagnostics and relatedSnippets. A key the agent did not ask for is
// never sent, and the context is omitted when every key it asked for is empty.
//
// The bridge calls the recording methods of a [State] in the editor's wire order (Opened, Changed,
// Focused, Cursor, SetDiagnostics, Closed) and [State.Context] when it asks the agent for a
// suggestion. Every position in the context is in the agent's position encoding, which is known
// only then: recorded positions keep their line and their column in all three encodings, so
// assembling needs no old text.
//
// # Recency
//
// A document becomes recent when it is focused, edited or opened. Those focused or edited come
// first, the most recent first, then those only opened, the last opened first: many editors
// (Helix, Kakoune) never say where the user is, and opening a file to read it is then all there
// is to go by. The recency list keeps closed documents too (recent_documents lists them), up to
// [Limits].Recent URIs; when it is full the least recent closed document is dropped first, then
// the least recent open one (so a document only opened never pushes out one the user worked in). Everything else the State knows
// about a document (visible range, cursor, diagnostics) is forgotten when it is closed.
//
// # Edit history
//
// Changes are grouped into history entries the way a person would describe them. A change joins
// the entry being built when all of these hold:
//
//   - it is in the same document, and no other document was edited or focused in between, and the
//     document was not closed or reopened;
//   - it comes at most [Limits].GroupGap (3s by default) after the entry's last change;
//   - it is in place: the whole lines it touches (in the text just before it) overlap the lines
//     the entry covers, or are adjacent to them (the line just before or just after).
//
// So typing a word a character at a time, fixing a typo with backspace, and going on to the next
// line makes one entry, while an edit 50 lines away, an edit in another file, or typing after a
// pause starts a new one. An entry keeps the whole lines it covers as they were before its first
// change and as they are now; an entry whose lines end up as they started (typed, then deleted)
// is dropped. An entry holds at most [Limits].EntryBytes bytes of old plus new text: a change
// that would take it over closes it and starts a new one, and a change that alone is larger is
// kept as a summary, rendered as
//
//	--- a/PATH
//	+++ b/PATH
//	# edit at line 12 too large to show: 4000 lines replaced by 10 lines
//
// (line 1-based, counts in diff lines). Consecutive too-large changes in place share one summary.
// A full-document change (an editor that syncs the whole text) is first reduced to the bytes that
// differ, so it groups and diffs like a small edit.
//
// Entries are rendered as unified diffs with no context lines, oldest first:
//
//	--- a/PATH
//	+++ b/PATH
//	@@ -A,B +C,D @@
//	-old line
//	+new line
//
// PATH is the display path the caller gives, or the path of the document's URI, without its
// leading "/". Lines common to the start or the end of the old and new text are trimmed first, so
// each hunk shows only lines that changed. The numbering follows GNU diff: A and C are 1-based
// line numbers; a count of 0 makes the number name the line after which the text is inserted (or
// was deleted); the count is always written, ",1" included. Every line of the diff ends with
// "\n"; a line keeps its own line ending, so CRLF text shows as "-old\r\n" (a lone "\r" ending
// is followed by "\n"). A last line with no line ending is followed by "\\ No newline at end of
// file", as GNU diff writes it.
//
// # User actions
//
// Each change is one action, at the position where the cursor ends up after it (for a deletion,
// where the deleted text was):
//
//   - insertChar: one character inserted (a "\r\n" counts as one);
//   - insertSelection: more text inserted (a paste, an auto-indented newline);
//   - deleteChar: one character deleted (backspace or delete);
//   - deleteSelection: more text deleted;
//   - replaceSelection: text replaced by other text, and every full-document change, whose
//     position is the start of the first line that differs;
//   - cursorMovement: a cursor reported by focus or by a request that is not where the last change
//     or the last known cursor of that document left it.
//
// # Bounds
//
// The State keeps at most [Limits].EditHistory entries of at most [Limits].EntryBytes bytes each,
// [Limits].UserActions actions, [Limits].Recent recent URIs and [Limits].Diagnostics diagnostics
// per open document. Recording a keystroke costs time in proportion to the lines it touches and
// the entry it joins, never to the document. Related snippets are searched within
// [Limits].SnippetBudget of wall time per request and are cut to at most 3 excerpts per file, 5
// files and 8 KiB of text; recentFiles carries at most [Limits].RecentFilesBytes of text in all,
// whatever maxCount the agent gave; see [State.Context].
package editorstate
