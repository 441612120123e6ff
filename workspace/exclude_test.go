package workspace

import (
	"strings"
	"testing"
)

// TestDefaultExcludesKeepSecrets: the files people keep secrets in match a default glob,
// anywhere in a path and in any case; ordinary source files do not.
func TestDefaultExcludesKeepSecrets(t *testing.T) {
	ex, err := NewExcludes(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret := map[string]string{
		"/home/ana/proj/.env":                     ".env",
		"/home/ana/proj/.env.local":               ".env.*",
		"/home/ana/proj/config/prod.env":          "*.env",
		`C:\Users\Ana\proj\.ENV`:                  ".env",
		"/home/ana/proj/certs/server.pem":         "*.pem",
		"/home/ana/proj/tls.key":                  "*.key",
		"/home/ana/.ssh/config":                   ".ssh/**",
		"/home/ana/.ssh/keys/deploy":              ".ssh/**",
		"/home/ana/proj/deploy/id_ed25519":        "id_ed25519*",
		"/home/ana/proj/deploy/id_rsa.pub":        "id_rsa*",
		"/home/ana/.aws/credentials":              ".aws/credentials",
		"/home/ana/proj/.aws/credentials":         ".aws/credentials",
		"/home/ana/.netrc":                        ".netrc",
		"/home/ana/proj/.npmrc":                   ".npmrc",
		"/home/ana/.pypirc":                       ".pypirc",
		"/home/ana/.git-credentials":              ".git-credentials",
		"/home/ana/proj/store.p12":                "*.p12",
		"/home/ana/proj/store.PFX":                "*.pfx",
		"/home/ana/proj/infra/prod.tfvars":        "*.tfvars",
		"/home/ana/proj/.gnupg/private-keys-v1.d": ".gnupg/**",
	}
	for p, want := range secret {
		if g, ok := ex.Match(p); !ok || g != want {
			t.Errorf("Match(%q) = %q, %v; want %q", p, g, ok, want)
		}
	}
	for _, p := range []string{
		"/home/ana/proj/main.go", "/home/ana/proj/environment.go", "/home/ana/proj/envs/a.go",
		"/home/ana/proj/keys.go", "/home/ana/proj/key/a.go", "/home/ana/proj/.envoy.yaml",
		"/home/ana/ssh/config", "/home/ana/proj/aws/credentials.go", "/home/ana/proj/README.md",
		"/home/ana/proj/.env/inner.go", // a folder named .env is not the file .env
	} {
		if g, ok := ex.Match(p); ok {
			t.Errorf("Match(%q) = %q: not a secret", p, g)
		}
	}
}

// TestExcludesFromTheUser: globs added, defaults cleared, and a glob that does not parse named
// in the error.
func TestExcludesFromTheUser(t *testing.T) {
	ex, err := NewExcludes(false, []string{"**/private/**", "*.secret", "/notes/todo.txt", `win\dir\*.txt`})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ex.Globs(), " "); got != "private/** *.secret notes/todo.txt win/dir/*.txt" {
		t.Errorf("Globs = %q", got)
	}
	for p, want := range map[string]string{
		"/w/private/a.go":        "private/**",
		"/w/src/private/x/y.go":  "private/**",
		"/w/a.secret":            "*.secret",
		"/w/notes/todo.txt":      "notes/todo.txt",
		`C:\w\win\dir\a.txt`:     "win/dir/*.txt",
		"/w/deep/notes/todo.txt": "notes/todo.txt",
	} {
		if g, ok := ex.Match(p); !ok || g != want {
			t.Errorf("Match(%q) = %q, %v; want %q", p, g, ok, want)
		}
	}
	if g, ok := ex.Match("/w/.env"); ok {
		t.Errorf("defaults cleared, yet .env matches %q", g)
	}
	for _, bad := range []string{"[a-", "a//b"} {
		if _, err := NewExcludes(false, []string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("NewExcludes(%q): %v; want an error naming it", bad, err)
		}
	}
	var none *Excludes
	if _, ok := none.Match("/w/.env"); ok {
		t.Error("no exclusions matched")
	}
}
