package zfs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
)

// maxVersionBytes bounds what is read of `zfs version`: two short lines,
// or a small JSON object.
const maxVersionBytes = 64 << 10

// Version is what `zfs version` says: the userland tools' release
// ("zfs-2.3.2-2~bpo12+2") and the loaded kernel module's
// ("zfs-kmod-2.3.2-2~bpo12+2"), each "" when not printed (no module loaded:
// zfs version prints the userland line and fails).
type Version struct {
	Userland string `json:"userland"`
	Kernel   string `json:"kernel"`
}

// ErrNoVersion: the output names neither the userland nor the module.
var ErrNoVersion = errors.New("no zfs- or zfs-kmod- version line")

// ParseVersionText reads `zfs version` (or `zpool version`) text output:
// "zfs-X" then "zfs-kmod-X", one a line. Lines that are neither (a warning
// printed before) are skipped.
func ParseVersionText(r io.Reader) (Version, error) {
	var v Version
	sc := bufio.NewScanner(io.LimitReader(r, maxVersionBytes))
	sc.Buffer(make([]byte, 0, 4096), maxVersionBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !plausibleVersion(line):
		case strings.HasPrefix(line, "zfs-kmod-") && v.Kernel == "":
			v.Kernel = line
		case strings.HasPrefix(line, "zfs-") && !strings.HasPrefix(line, "zfs-kmod-") && v.Userland == "":
			v.Userland = line
		}
	}
	if err := sc.Err(); err != nil {
		return Version{}, fmt.Errorf("zfs version: %w", err)
	}
	if v.Userland == "" && v.Kernel == "" {
		return Version{}, fmt.Errorf("zfs version: %w", ErrNoVersion)
	}
	return v, nil
}

// ParseVersionJSON reads `zfs version -j` (OpenZFS 2.3+):
// {"output_version":{…},"zfs_version":{"userland":"zfs-…","kernel":"zfs-kmod-…"}}.
func ParseVersionJSON(r io.Reader) (Version, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxVersionBytes+1))
	if err != nil {
		return Version{}, fmt.Errorf("zfs version -j: %w", err)
	}
	if len(b) > maxVersionBytes {
		return Version{}, fmt.Errorf("zfs version -j: output over %d bytes", maxVersionBytes)
	}
	var doc struct {
		ZFSVersion *Version `json:"zfs_version"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &doc); err != nil {
		return Version{}, fmt.Errorf("zfs version -j: %w", err)
	}
	if doc.ZFSVersion == nil {
		return Version{}, fmt.Errorf("zfs version -j: no zfs_version object")
	}
	v := Version{Userland: strings.TrimSpace(doc.ZFSVersion.Userland), Kernel: strings.TrimSpace(doc.ZFSVersion.Kernel)}
	if !plausibleVersion(v.Userland) {
		v.Userland = ""
	}
	if !plausibleVersion(v.Kernel) {
		v.Kernel = ""
	}
	if v.Userland == "" && v.Kernel == "" {
		return Version{}, fmt.Errorf("zfs version -j: %w", ErrNoVersion)
	}
	return v, nil
}

// ParseModuleVersion reads /sys/module/zfs/version ("2.3.2-2~bpo12+2") and
// returns it in zfs version's form ("zfs-kmod-2.3.2-2~bpo12+2").
func ParseModuleVersion(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 256))
	if err != nil {
		return "", fmt.Errorf("zfs module version: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" || !plausibleVersion(s) || !unicode.IsDigit(rune(s[0])) {
		return "", fmt.Errorf("zfs module version %.40q: want a release such as 2.3.2-1", s)
	}
	return "zfs-kmod-" + s, nil
}

// plausibleVersion: one short token of printable ASCII, as releases are.
func plausibleVersion(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

// Release is the upstream OpenZFS release of a version string, without the
// "zfs-"/"zfs-kmod-" prefix and the packaging revision: "2.3.2" of
// "zfs-kmod-2.3.2-2~bpo12+2", "2.2.0-rc4" of "zfs-2.2.0-rc4-1". Packagers
// revise userland and module separately (Ubuntu ships the module with the
// kernel), so only the release tells an upgrade that waits for a reboot.
// A build from git keeps its commit ("0.6.3-31_g04f118d"): two commits of
// one release are different code.
func Release(v string) string {
	v = strings.TrimPrefix(v, "zfs-kmod-")
	v = strings.TrimPrefix(v, "zfs-")
	v = strings.TrimPrefix(v, "v")
	rel, rest, _ := strings.Cut(v, "-")
	tag, _, _ := strings.Cut(rest, "-")
	if strings.HasPrefix(tag, "rc") || gitDescribe.MatchString(tag) {
		rel += "-" + tag
	}
	return rel
}

// gitDescribe is the "<commits>_g<hash>" part of a version built from git.
var gitDescribe = regexp.MustCompile(`^\d+_g[0-9a-f]{7,40}$`)
