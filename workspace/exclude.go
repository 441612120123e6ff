package workspace

import (
	"fmt"
	"path"
	"strings"
)

// DefaultExcludes are the files kept from the agent unless the user clears them: secrets and
// keys, in the spirit of the files Zed keeps from its edit predictions.
var DefaultExcludes = []string{
	// Environment files and credentials of tools.
	".env", ".env.*", "*.env", ".envrc", ".dev.vars", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
	".git-credentials", ".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config",
	".config/gh/hosts.yml", "secrets.yml", "secrets.yaml", "*.tfvars", "*.tfstate",
	// Keys and certificates.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.asc", "*.gpg",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	// Whole folders of keys.
	".ssh/**", ".gnupg/**",
}

// Excludes are the globs of the files the agent must never see.
//
// A glob is matched against the end of a file's path, at any depth, as if it began with "**/":
// ".env" matches every file named .env, ".aws/credentials" that file in any .aws folder, and
// ".ssh/**" everything in any .ssh folder. In one element, "*" matches any run of characters,
// "?" one character and "[a-z]" one of a class (Go's path.Match); "**" as a whole element
// matches any number of elements. Matching ignores case on every platform: a secret is still a
// secret when its name is spelled in capitals.
type Excludes struct {
	globs []glob
}

type glob struct {
	text  string   // as the user wrote it
	elems []string // lower-cased, split at "/"
}

// NewExcludes makes the exclusions: DefaultExcludes when defaults is set, and the extra globs.
// A glob that does not parse is an error that names it.
func NewExcludes(defaults bool, extra []string) (*Excludes, error) {
	var all []string
	if defaults {
		all = append(all, DefaultExcludes...)
	}
	all = append(all, extra...)
	e := &Excludes{}
	seen := map[string]bool{}
	for _, g := range all {
		g = strings.TrimSpace(strings.ReplaceAll(g, `\`, "/"))
		g = strings.TrimPrefix(strings.TrimPrefix(g, "**/"), "/")
		if g == "" || seen[g] {
			continue
		}
		seen[g] = true
		elems := strings.Split(strings.ToLower(g), "/")
		for _, el := range elems {
			if el == "" {
				return nil, fmt.Errorf("exclusion glob %q: an empty element", g)
			}
			if _, err := path.Match(el, ""); err != nil {
				return nil, fmt.Errorf("exclusion glob %q: %w", g, err)
			}
		}
		e.globs = append(e.globs, glob{text: g, elems: elems})
	}
	return e, nil
}

// Globs lists the globs, as given.
func (e *Excludes) Globs() []string {
	if e == nil {
		return nil
	}
	out := make([]string, len(e.globs))
	for i, g := range e.globs {
		out[i] = g.text
	}
	return out
}

// Match reports the first glob that matches the path p (of any flavour: "/" and "\" both
// separate), or ok false.
func (e *Excludes) Match(p string) (glob string, ok bool) {
	if e == nil || len(e.globs) == 0 {
		return "", false
	}
	elems := splitPath(p)
	for _, g := range e.globs {
		for start := len(elems) - 1; start >= 0; start-- {
			if matchElems(g.elems, elems[start:]) {
				return g.text, true
			}
		}
	}
	return "", false
}

// splitPath splits a path into its lower-cased elements, dropping empty ones and a drive.
func splitPath(p string) []string {
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	var out []string
	for _, el := range strings.Split(p, "/") {
		if el != "" && el != "." {
			out = append(out, el)
		}
	}
	return out
}

// matchElems matches the glob's elements against all of names.
func matchElems(pat, names []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(names); i++ {
				if matchElems(rest, names[i:]) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], names[0]); !ok {
			return false
		}
		pat, names = pat[1:], names[1:]
	}
	return len(names) == 0
}
