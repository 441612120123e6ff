//go:build !windows

package workspace

import "path/filepath"

// realPath is the path of an existing file or folder with every symbolic link resolved.
func realPath(p string) (string, error) { return filepath.EvalSymlinks(p) }
