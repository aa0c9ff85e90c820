package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/procfs"
	"github.com/zwatch/zwatch/model/zfs"
)

// snapshotsRSS streams a snapshot listing through zfs.SummarizeSnapshots from the file, never
// holding it whole, and prints: the growth of the peak resident memory (KiB), the Go heap still in
// use by the result after a GC (KiB), the bytes allocated on the way (KiB, garbage included: until
// the first GC at Go's 4 MB minimum heap target it is resident), datasets, snapshots, microseconds.
func snapshotsRSS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	before, err := peakRSSKiB()
	if err != nil {
		return err
	}
	t0 := time.Now()
	stats, total, err := zfs.SummarizeSnapshots(bufio.NewReaderSize(f, 64<<10))
	took := time.Since(t0)
	if err != nil {
		return fmt.Errorf("summarize %s: %w", path, err)
	}
	after, err := peakRSSKiB()
	if err != nil {
		return err
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	allocated := m1.TotalAlloc - m0.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&m1)
	retained := int64(m1.HeapInuse) - int64(m0.HeapInuse)
	runtime.KeepAlive(stats)
	fmt.Printf("%d %d %d %d %d %d\n", after-before, retained/1024, allocated/1024, len(stats), total, took.Microseconds())
	return nil
}

// peakRSSKiB is the process's peak resident set (VmHWM).
func peakRSSKiB() (int64, error) {
	p, err := procfs.Self()
	if err != nil {
		return 0, fmt.Errorf("read /proc/self: %w", err)
	}
	s, err := p.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/status: %w", err)
	}
	return int64(s.VmHWM >> 10), nil
}
