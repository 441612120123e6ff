//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openWalk opens the checked file one element at a time from its workspace folder, each with
// openat and O_NOFOLLOW relative to the folder opened before it: no link is followed, so the file
// opened is the one under the folder, or the open fails (ELOOP, ENOTDIR) when a link was swapped
// in. The folder itself is opened without following a link in its place.
func openWalk(c Checked) (*os.File, error) {
	dir, err := unix.Open(c.Folder.Real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: c.Folder.Real, Err: err}
	}
	if c.Rel == "." {
		return os.NewFile(uintptr(dir), c.Real), nil
	}
	elems := strings.Split(c.Rel, "/")
	for i, el := range elems {
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(elems)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK | unix.O_NOCTTY // a FIFO is not waited on
		}
		fd, err := openat(dir, el, flags)
		unix.Close(dir)
		switch {
		case err == nil:
			dir = fd
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK):
			return nil, fmt.Errorf("%s: %w", c.Rel, ErrMoved)
		default:
			return nil, &os.PathError{Op: "open", Path: c.Real, Err: err}
		}
	}
	return os.NewFile(uintptr(dir), c.Real), nil
}

// openat is unix.Openat, retried when a signal interrupts it.
func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
