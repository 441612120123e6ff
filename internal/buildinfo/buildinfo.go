// Package buildinfo says which acp-lsp-bridge this is: the version the user sees in --version,
// the editor in serverInfo and the agent in clientInfo.
//
// A release build stamps it with -ldflags "-X .../internal/buildinfo.stamped=v1.2.3" (make dist).
// Otherwise the Go toolchain's own record answers: `go install …@v1.2.3` records the module
// version; `go build` in a checkout records a pseudo-version built from the commit (Go 1.24 and
// later) with +dirty when the tree has changes, or at least the commit itself.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// stamped is set by the linker in release builds; empty otherwise.
var stamped string

var version = sync.OnceValue(func() string {
	info, _ := debug.ReadBuildInfo()
	return fromBuild(stamped, info)
})

// Version is this binary's version: the stamped one, the module's, or "devel" with the commit.
func Version() string { return version() }

// fromBuild picks the version from what the linker and the toolchain recorded.
func fromBuild(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	// Built with -buildvcs=false, or by a toolchain that does not make pseudo-versions: the
	// commit, when it was recorded, still says what was built.
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "devel"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	v := "devel-" + revision
	if modified {
		v += "+dirty"
	}
	return v
}
