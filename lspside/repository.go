package lspside

import (
	"bufio"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// repositoryOf describes the git repository of a workspace folder for nes/start: the URL of its
// "origin" remote (else the first remote) and the owner and name read from it. It reads the
// repository's config file itself (no git program needed); nil when there is none.
func repositoryOf(root string) *acp.UnstableNesRepository {
	gitDir := filepath.Join(root, ".git")
	if b, err := os.ReadFile(gitDir); err == nil { // a worktree or submodule: "gitdir: <path>"
		if dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
			gitDir = strings.TrimSpace(dir)
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(root, gitDir)
			}
			if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				gitDir = filepath.Join(gitDir, strings.TrimSpace(string(common)))
			}
		}
	}
	f, err := os.Open(filepath.Join(gitDir, "config"))
	if err != nil {
		return nil
	}
	defer f.Close()
	remotes := map[string]string{}
	var order []string
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "["):
			section = ""
			if name, ok := strings.CutPrefix(strings.TrimSuffix(line, "]"), "[remote "); ok {
				section = strings.Trim(strings.TrimSpace(name), `"`)
			}
		case section != "":
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "url") {
				if _, seen := remotes[section]; !seen {
					order = append(order, section)
				}
				remotes[section] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	remote, ok := remotes["origin"]
	if !ok {
		if len(order) == 0 {
			return nil
		}
		remote = remotes[order[0]]
	}
	owner, name, ok := ownerAndName(remote)
	if !ok {
		return nil
	}
	return &acp.UnstableNesRepository{Name: name, Owner: owner, RemoteUrl: redactURL(remote)}
}

// ownerAndName reads owner and repository name from a remote URL: https://host/owner/name(.git),
// ssh://git@host[:port]/owner/name(.git), the scp-like git@host:owner/name(.git), git://, and local
// paths (file:// or absolute: the last two path elements). For nested groups (GitLab) the owner is
// everything before the name.
func ownerAndName(remote string) (owner, name string, ok bool) {
	remote = strings.TrimSpace(remote)
	var path string
	switch {
	case strings.Contains(remote, "://"):
		u, err := url.Parse(remote)
		if err != nil {
			return "", "", false
		}
		path = u.Path
	case strings.HasPrefix(remote, "/"):
		path = remote
	default: // scp-like: [user@]host:path
		_, p, found := strings.Cut(remote, ":")
		if !found || strings.Contains(remote[:strings.Index(remote, ":")], "/") {
			return "", "", false
		}
		path = p
	}
	path = strings.Trim(strings.TrimSuffix(strings.TrimRight(path, "/"), ".git"), "/")
	i := strings.LastIndex(path, "/")
	if i <= 0 || i == len(path)-1 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

// redactURL drops a password or token from a remote URL: it must not travel to the agent.
func redactURL(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	if _, hasPassword := u.User.Password(); hasPassword || u.Scheme == "https" || u.Scheme == "http" {
		u.User = nil
	}
	return u.String()
}
