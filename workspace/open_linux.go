package workspace

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// haveOpenat2 says whether openat2 works here: not on a kernel older than 5.6, nor in a sandbox
// that refuses the call. Without it the generic check is used.
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// forceGeneric makes openChecked open one element at a time, as without openat2, for its tests.
var forceGeneric bool

// openChecked opens the checked file beneath its workspace folder with openat2: the path below
// the folder was resolved by the check and so holds no link, and RESOLVE_NO_SYMLINKS refuses any
// link found in it now, RESOLVE_BENEATH any way out of the folder. The folder itself is opened
// without following a link in its place.
func openChecked(c Checked) (*os.File, error) {
	if forceGeneric || !haveOpenat2() {
		return openWalk(c)
	}
	root, err := unix.Open(c.Folder.Real, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: c.Folder.Real, Err: err}
	}
	defer unix.Close(root)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range 8 {
		fd, err := unix.Openat2(root, c.Rel, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), c.Real), nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue // a lookup that a rename raced may be retried
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
			return nil, fmt.Errorf("%s: %w", c.Rel, ErrMoved)
		}
		return nil, &os.PathError{Op: "open", Path: c.Real, Err: err}
	}
	return nil, fmt.Errorf("%s: %w", c.Rel, ErrMoved)
}
