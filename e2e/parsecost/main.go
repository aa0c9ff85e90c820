// Command parsecost times zwatch's own parsers on saved tool output, in-process
// (no process start): the zwatch share of one poll cycle, to set against the
// zpool commands' own time. Run in the e2e guest by e2e/scenarios.sh.
//
//	parsecost status-json FILE | status-text FILE | list FILE | snapshots FILE   [N]
//	parsecost snapshots-rss FILE
//
// Prints the mean time of one parse in microseconds. snapshots-rss streams FILE (a
// `zfs list -Hp -t snapshot -o name,creation,used -s creation` listing) once through
// zfs.SummarizeSnapshots, as the snapshots collector streams zfs list's stdout, and prints
// the growth of the process's peak resident memory (VmHWM, KiB), the heap the result keeps
// (KiB), the bytes allocated on the way (KiB), the datasets and snapshots it counted, and the
// time it took (microseconds).
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/zwatch/zwatch/model/zfs"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "snapshots-rss" {
		if err := snapshotsRSS(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: parsecost status-json|status-text|list|snapshots FILE [N] | snapshots-rss FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := 200
	if len(os.Args) > 3 {
		n, _ = strconv.Atoi(os.Args[3])
	}
	parse := map[string]func() error{
		"status-json": func() error { _, err := zfs.ParseStatusJSON(bytes.NewReader(data)); return err },
		"status-text": func() error { _, err := zfs.ParseStatusText(bytes.NewReader(data)); return err },
		"list":        func() error { _, err := zfs.ParseList(bytes.NewReader(data)); return err },
		"snapshots":   func() error { _, _, err := zfs.SummarizeSnapshots(bytes.NewReader(data)); return err },
	}[os.Args[1]]
	if parse == nil {
		fmt.Fprintln(os.Stderr, "unknown kind", os.Args[1])
		os.Exit(2)
	}
	if err := parse(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		_ = parse()
	}
	fmt.Printf("%.0f\n", float64(time.Since(t0).Microseconds())/float64(n))
}
