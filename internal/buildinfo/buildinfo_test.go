package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	info := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/acp-lsp-bridge/acp-lsp-bridge", Version: v}, Settings: s}
	}
	for _, c := range []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"stamped wins", "v1.2.3", info("v0.9.0", nil), "v1.2.3"},
		{"go install at a version", "", info("v0.9.0", nil), "v0.9.0"},
		{"go build in a checkout", "", info("v0.0.0-20261126031411-92fedf2854f5+dirty", vcs("92fedf2854f54d2997c8bc301756c175f2eed1f8", "true")), "v0.0.0-20261126031411-92fedf2854f5+dirty"},
		{"devel with a clean commit", "", info("(devel)", vcs("92fedf2854f54d2997c8bc301756c175f2eed1f8", "false")), "devel-92fedf2854f5"},
		{"devel with changes", "", info("(devel)", vcs("92fedf2854f54d2997c8bc301756c175f2eed1f8", "true")), "devel-92fedf2854f5+dirty"},
		{"nothing recorded", "", info("(devel)", nil), "devel"},
		{"no build information", "", nil, "devel"},
	} {
		if got := fromBuild(c.stamped, c.info); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
