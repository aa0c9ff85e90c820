package mountcheck

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/zwatch/zwatch/facts"
)

// DefaultLimit is how many entries Underneath visits before it stops: enough
// to tell "a photo import landed here" from "empty", cheap on an SD card.
const DefaultLimit = 10000

// maxDepth bounds the directories open at once during a walk.
const maxDepth = 64

// maxExamples is how many file names DirContents carries.
const maxExamples = 3

// Underneath looks at the directory at mountpoint on the filesystem below an
// unmounted dataset: what was written there instead of into the dataset.
// The mountpoint itself is not followed when it is a symbolic link (Error
// says so); the walk opens each directory relative to its parent with
// O_NOFOLLOW, skips whatever lies on another filesystem (a child dataset
// mounted below, a tmpfs), counts what is not a directory and the bytes of
// regular files, and stops after limit entries with Truncated set. A
// directory that cannot be read sets Error and never reads as empty; when
// it is one below the mountpoint, Files and Bytes count what was read
// before it. A mountpoint that does not exist holds nothing.
func Underneath(mountpoint string, limit int) facts.DirContents {
	dc := facts.DirContents{Path: mountpoint}
	if limit <= 0 {
		limit = DefaultLimit
	}
	var st unix.Stat_t
	if err := unix.Lstat(mountpoint, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return dc
		}
		dc.Error = fmt.Sprintf("cannot stat %s: %v", mountpoint, err)
		return dc
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		target, _ := os.Readlink(mountpoint)
		dc.Error = fmt.Sprintf("%s is a symbolic link (to %s), not a directory; it is not followed", mountpoint, target)
		return dc
	default:
		dc.Error = fmt.Sprintf("%s is not a directory", mountpoint)
		return dc
	}
	fd, err := unix.Open(mountpoint, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		dc.Error = fmt.Sprintf("cannot read %s: %v", mountpoint, err)
		return dc
	}
	w := walker{dev: uint64(st.Dev), left: limit, dc: &dc}
	w.dir(fd, "", 0)
	return dc
}

// walker carries one walk's bound and findings.
type walker struct {
	dev  uint64 // the mountpoint directory's filesystem
	left int    // entries still to visit
	dc   *facts.DirContents
}

// errStop ends the walk: the bound is reached or a directory was unreadable.
var errStop = errors.New("stop")

// dir reads the directory open as fd (rel is its path below the
// mountpoint) and closes fd.
func (w *walker) dir(fd int, rel string, depth int) error {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint64(st.Dev) != w.dev {
		return nil // replaced by another filesystem between the stat and the open
	}
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			if err := w.entry(fd, rel, name, depth); err != nil {
				return err
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return w.fail(rel, err)
		}
	}
}

// entry visits one name of the directory open as fd.
func (w *walker) entry(fd int, rel, name string, depth int) error {
	if w.left <= 0 {
		w.dc.Truncated = true
		return errStop
	}
	w.left--
	child := path.Join(rel, name)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // removed while we looked
		}
		return w.fail(child, err)
	}
	if uint64(st.Dev) != w.dev {
		return nil // another filesystem: a child dataset mounted below
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		w.dc.Files++
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			w.dc.Bytes += uint64(st.Size)
		}
		if len(w.dc.Examples) < maxExamples {
			w.dc.Examples = append(w.dc.Examples, child)
		}
		return nil
	}
	if depth+1 >= maxDepth {
		w.dc.Truncated = true
		return errStop
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return w.fail(child, err)
	}
	return w.dir(cfd, child, depth+1)
}

// fail records that rel could not be read and stops the walk: what it
// holds is unknown, so the contents are not reported as complete.
func (w *walker) fail(rel string, err error) error {
	where := w.dc.Path
	if rel != "" {
		where = path.Join(w.dc.Path, rel)
	}
	w.dc.Error = fmt.Sprintf("cannot read %s: %v", where, err)
	return errStop
}
