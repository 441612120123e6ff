package lspside

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOwnerAndName(t *testing.T) {
	for _, tc := range []struct{ remote, owner, name string }{
		{"https://github.com/alice/my-app.git", "alice", "my-app"},
		{"https://github.com/alice/my-app", "alice", "my-app"},
		{"https://github.com/alice/my-app/", "alice", "my-app"},
		{"https://token@github.com/alice/my-app.git", "alice", "my-app"},
		{"ssh://git@github.com/alice/my-app.git", "alice", "my-app"},
		{"ssh://git@git.example.com:2222/alice/my-app.git", "alice", "my-app"},
		{"git@github.com:alice/my-app.git", "alice", "my-app"},
		{"github.com:alice/my-app", "alice", "my-app"},
		{"git://example.org/alice/my-app.git", "alice", "my-app"},
		{"https://gitlab.com/group/sub/proj.git", "group/sub", "proj"},
		{"file:///srv/git/team/proj.git", "srv/git/team", "proj"},
		{"/srv/git/team/proj.git", "srv/git/team", "proj"},
	} {
		owner, name, ok := ownerAndName(tc.remote)
		if !ok || owner != tc.owner || name != tc.name {
			t.Errorf("ownerAndName(%q) = %q, %q, %v; want %q, %q", tc.remote, owner, name, ok, tc.owner, tc.name)
		}
	}
	for _, bad := range []string{"", "https://github.com/", "https://github.com/alone", "not a url", "./rel/path:x"} {
		if o, n, ok := ownerAndName(bad); ok {
			t.Errorf("ownerAndName(%q) = %q, %q; want no answer", bad, o, n)
		}
	}
}

func TestRepositoryOf(t *testing.T) {
	dir := t.TempDir()
	if repositoryOf(dir) != nil {
		t.Error("a folder without .git has a repository")
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = git@github.com:up/stream.git\n" +
		"[remote \"origin\"]\n\turl = https://alice:s3cret@github.com/alice/my-app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	r := repositoryOf(dir)
	if r == nil || r.Owner != "alice" || r.Name != "my-app" || r.RemoteUrl != "https://github.com/alice/my-app.git" {
		t.Fatalf("repository %+v (origin wins; the password is not sent)", r)
	}
	// A worktree: .git is a file pointing at the real git dir.
	wt := t.TempDir()
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(dir, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := repositoryOf(wt); r == nil || r.Name != "my-app" {
		t.Errorf("worktree repository %+v", r)
	}
	// No remote at all: omitted.
	bare := t.TempDir()
	_ = os.MkdirAll(filepath.Join(bare, ".git"), 0o755)
	_ = os.WriteFile(filepath.Join(bare, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644)
	if r := repositoryOf(bare); r != nil {
		t.Errorf("repository without remotes: %+v", r)
	}
}
