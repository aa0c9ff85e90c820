package zfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersionTextReal(t *testing.T) {
	cases := []struct {
		file, user, kernel, userRel, kernRel string
	}{
		{"../../testdata/captured/zfs-2.3.2/l0-version.zfs-version.txt", "zfs-2.3.2-2~bpo12+2", "zfs-kmod-2.3.2-2~bpo12+2", "2.3.2", "2.3.2"},
		{"../../testdata/captured/zfs-2.3.2/a.version.txt", "zfs-2.3.2-2~bpo12+2", "zfs-kmod-2.3.2-2~bpo12+2", "2.3.2", "2.3.2"},
		{"../../testdata/captured/zfs-2.1.11/a.version.txt", "zfs-2.1.11-1+deb12u1", "zfs-kmod-2.1.11-1+deb12u1", "2.1.11", "2.1.11"},
		{"../../testdata/zfs-version/openzfs-13248-arch.txt", "zfs-2.1.4-1", "zfs-kmod-2.1.3-1", "2.1.4", "2.1.3"},
		{"../../testdata/zfs-version/openzfs-16716-nixos.txt", "zfs-2.2.6-1", "zfs-kmod-2.2.4-1", "2.2.6", "2.2.4"},
		{"../../testdata/zfs-version/openzfs-18559-ubuntu.txt", "zfs-2.4.1-1ubuntu5", "zfs-kmod-2.2.2-0ubuntu9.4", "2.4.1", "2.2.2"},
		{"../../testdata/zfs-version/openzfs-11556-ubuntu.txt", "zfs-2.0.2-1", "zfs-kmod-0.8.4-1ubuntu11", "2.0.2", "0.8.4"},
	}
	for _, c := range cases {
		f, err := os.Open(c.file)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseVersionText(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if v.Userland != c.user || v.Kernel != c.kernel {
			t.Errorf("%s: got %+v", filepath.Base(c.file), v)
		}
		if Release(v.Userland) != c.userRel || Release(v.Kernel) != c.kernRel {
			t.Errorf("%s: releases %q %q, want %q %q", filepath.Base(c.file), Release(v.Userland), Release(v.Kernel), c.userRel, c.kernRel)
		}
	}
}

func TestParseVersionTextOnlyUserland(t *testing.T) {
	// No module loaded: zfs version prints the userland line and fails
	// (the error goes to stderr).
	v, err := ParseVersionText(strings.NewReader("zfs-2.1.11-1+deb12u1\n"))
	if err != nil || v.Userland != "zfs-2.1.11-1+deb12u1" || v.Kernel != "" {
		t.Errorf("got %+v, %v", v, err)
	}
	if _, err := ParseVersionText(strings.NewReader("usage: zfs command args ...\n")); err == nil {
		t.Error("usage text parsed as a version")
	}
}

func TestParseModuleVersionReal(t *testing.T) {
	for file, want := range map[string]string{
		"../../testdata/zfs-version/openzfs-10498-sys-module-zfs-version.txt":     "zfs-kmod-0.8.3-1~bpo10+1",
		"../../testdata/captured/zfs-2.3.2/l0-version.sys-module-zfs-version.txt": "zfs-kmod-2.3.2-2~bpo12+2",
	} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseModuleVersion(f)
		f.Close()
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v", file, got, err)
		}
	}
	if _, err := ParseModuleVersion(strings.NewReader("")); err == nil {
		t.Error("empty module version accepted")
	}
}

func TestParseVersionJSON(t *testing.T) {
	// `zfs version -j` on the QEMU VM, OpenZFS 2.3.2 (capture step l0).
	f, err := os.Open("../../testdata/captured/zfs-2.3.2/l0-version.zfs-version-j.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ParseVersionJSON(f)
	if err != nil || v.Userland != "zfs-2.3.2-2~bpo12+2" || v.Kernel != "zfs-kmod-2.3.2-2~bpo12+2" {
		t.Errorf("got %+v, %v", v, err)
	}
	for _, bad := range []string{"", "{}", `{"zfs_version":{}}`, "zfs-2.3.2\n", `{"zfs_version":{"userland":"a b"}}`} {
		if _, err := ParseVersionJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRelease(t *testing.T) {
	// Version strings as packagers and builds write them; the two git
	// builds are from the output quoted in openzfs/zfs#2557.
	for in, want := range map[string]string{
		"zfs-0.6.3-31_g04f118d":         "0.6.3-31_g04f118d",
		"zfs-kmod-0.6.3-30_g672692c":    "0.6.3-30_g672692c",
		"zfs-kmod-2.2.2-0ubuntu9.4":     "2.2.2",
		"zfs-2.2.0-rc4-1":               "2.2.0-rc4",
		"zfs-kmod-2.1.4-FreeBSD_g52bad": "2.1.4",
		"zfs-kmod-v2023072100-zfs_1":    "2023072100",
		"zfs-2.3.2":                     "2.3.2",
	} {
		if got := Release(in); got != want {
			t.Errorf("Release(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, p := range []string{"../../testdata/captured/zfs-2.3.2/a.version.txt", "../../testdata/captured/zfs-2.3.2/l0-version.zfs-version-j.json", "../../testdata/captured/zfs-2.3.2/l0-version.sys-module-zfs-version.txt", "../../testdata/zfs-version/openzfs-18559-ubuntu.txt", "../../testdata/zfs-version/openzfs-10498-sys-module-zfs-version.txt"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func(string) (Version, error){
			func(s string) (Version, error) { return ParseVersionText(strings.NewReader(s)) },
			func(s string) (Version, error) { return ParseVersionJSON(strings.NewReader(s)) },
		} {
			v, err := parse(string(b))
			if err == nil && v.Userland == "" && v.Kernel == "" {
				t.Fatalf("no error and no version for %q", b)
			}
			if err == nil && (!plausibleVersion(v.Userland) && v.Userland != "" || !plausibleVersion(v.Kernel) && v.Kernel != "") {
				t.Fatalf("implausible version %+v", v)
			}
			_ = Release(v.Userland)
		}
		if s, err := ParseModuleVersion(strings.NewReader(string(b))); err == nil && !strings.HasPrefix(s, "zfs-kmod-") {
			t.Fatalf("module version %q", s)
		}
	})
}
