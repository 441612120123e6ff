package workspace

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// realPath is the path of an existing file or folder with every link resolved: symbolic links
// (filepath.EvalSymlinks), then what Windows itself resolves (GetFinalPathNameByHandle), which
// takes in junctions, which EvalSymlinks leaves alone.
func realPath(p string) (string, error) {
	p, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if final, err := finalPath(p); err == nil {
		return final, nil
	}
	return p, nil
}

// finalPath is GetFinalPathNameByHandle's path of an existing file or folder.
func finalPath(p string) (string, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	return handlePath(h)
}

// handlePath is the final path of an open handle (GetFinalPathNameByHandle), in the ordinary
// spelling: C:\x, \\server\share\x.
func handlePath(h windows.Handle) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
	if err != nil {
		return "", err
	}
	out := windows.UTF16ToString(buf[:n])
	switch {
	case strings.HasPrefix(out, `\\?\UNC\`):
		out = `\\` + out[len(`\\?\UNC\`):]
	case strings.HasPrefix(out, `\\?\`):
		out = out[len(`\\?\`):]
	}
	return out, nil
}
