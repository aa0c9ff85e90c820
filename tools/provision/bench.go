package provision

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/zwatch/zwatch/internal/units"
)

// BenchOptions configures `zwatch provision bench POOL`.
type BenchOptions struct {
	Pool string
	// Size of each test file; default 1 GiB. The temporary datasets have
	// primarycache=metadata, so reads come from the disks, not the ARC.
	Size uint64
	// Encryption also measures every setting with aes-256-gcm.
	Encryption bool
	// NetworkMBps is what the box serves over; default 118 (1 GbE).
	NetworkMBps float64
	Out         io.Writer
	// Progress shows a progress bar (off in tests).
	Progress bool
	Host     Host
}

// BenchResult is one measured setting and data kind.
type BenchResult struct {
	Compression string  `json:"compression"`
	Encrypted   bool    `json:"encrypted"`
	Data        string  `json:"data"` // incompressible or mixed
	WriteMBps   float64 `json:"write_mb_per_s"`
	ReadMBps    float64 `json:"read_mb_per_s"`
	Ratio       float64 `json:"compress_ratio"`
}

// benchCompressions are the settings people choose between today.
var benchCompressions = []string{"off", "lz4", "zstd-1", "zstd-3"}

const (
	dataIncompressible = "incompressible"
	dataMixed          = "mixed"
	benchPrefix        = "zwatch-bench-"
)

// Bench measures sequential write and read throughput of the pool for each
// compression setting on temporary datasets, prints a table with
// recommendations, and destroys the datasets again, also on failure.
func Bench(ctx context.Context, o BenchOptions) ([]BenchResult, error) {
	if o.Size == 0 {
		o.Size = 1 << 30
	}
	if o.NetworkMBps == 0 {
		o.NetworkMBps = 118
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if problem := CheckPoolName(o.Pool); problem != "" {
		return nil, fmt.Errorf("pool name %q: %s", o.Pool, problem)
	}
	if _, err := o.Host.Run(ctx, []string{"zpool", "list", "-H", "-o", "name", o.Pool}); err != nil {
		return nil, fmt.Errorf("pool %s: %w (is it imported? `zpool list`)", o.Pool, err)
	}
	// A dataset inherits its parent's encryption, and ZFS allows no
	// unencrypted child of an encrypted one: on a pool whose root dataset
	// is encrypted every setting is measured encrypted, under the pool's
	// own key, and the table says so rather than show "no" rows that are
	// encrypted after all.
	poolEnc, err := zfsGet(ctx, o.Host, o.Pool, "encryption")
	if err != nil {
		return nil, fmt.Errorf("encryption of pool %s's root dataset: %w", o.Pool, err)
	}
	inherited := poolEnc != "" && poolEnc != "off" && poolEnc != "-"
	if inherited {
		fmt.Fprintf(o.Out, "Pool %s's root dataset is encrypted (%s): every dataset in it is, so every setting is measured encrypted, under the pool's key. To compare with unencrypted storage, run the bench on an unencrypted pool.\n", o.Pool, poolEnc)
		o.Encryption = false
	}
	keyFile := ""
	if o.Encryption {
		f, err := os.CreateTemp("", "zwatch-bench-*.key")
		if err != nil {
			return nil, fmt.Errorf("temporary key file: %w", err)
		}
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		_, err = f.Write(key)
		f.Close()
		keyFile = f.Name()
		defer os.Remove(keyFile)
		if err != nil {
			return nil, fmt.Errorf("temporary key file: %w", err)
		}
	}
	type setting struct {
		comp string
		enc  bool
	}
	var settings []setting
	for _, c := range benchCompressions {
		settings = append(settings, setting{c, inherited})
		if o.Encryption {
			settings = append(settings, setting{c, true})
		}
	}
	var bar *progressbar.ProgressBar
	if o.Progress {
		bar = progressbar.DefaultBytes(int64(o.Size)*int64(len(settings))*2*2, "measuring")
	}
	fmt.Fprintf(o.Out, "Measuring pool %s: %d settings × 2 kinds of data, %s per file, write then read.\n", o.Pool, len(settings), units.IEC(o.Size))
	var results []BenchResult
	for _, s := range settings {
		name := o.Pool + "/" + benchPrefix + s.comp
		if s.enc {
			name += "-aes"
		}
		rs, err := benchDataset(ctx, o, name, s.comp, keyFile, s.enc, !inherited, bar)
		results = append(results, rs...)
		if err != nil {
			return results, err
		}
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(o.Out)
	}
	writeBenchTable(o.Out, results, o.NetworkMBps)
	return results, nil
}

// benchDataset creates one temporary dataset, measures both kinds of data
// on it and destroys it.
// enc is whether the dataset is encrypted; ownKey, whether it gets the
// bench's own key rather than inheriting the pool's encryption.
func benchDataset(ctx context.Context, o BenchOptions, name, comp, keyFile string, enc, ownKey bool, bar *progressbar.ProgressBar) (_ []BenchResult, err error) {
	create := []string{"zfs", "create", "-o", "compression=" + comp, "-o", "recordsize=1M", "-o", "primarycache=metadata", "-o", "atime=off"}
	if enc && ownKey {
		create = append(create, "-o", "encryption=aes-256-gcm", "-o", "keyformat=raw", "-o", "keylocation=file://"+keyFile)
	}
	if _, err := o.Host.Run(ctx, append(create, name)); err != nil {
		return nil, fmt.Errorf("create temporary dataset %s: %w", name, err)
	}
	defer func() {
		// Destroy even when the measurement failed or was interrupted.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, derr := o.Host.Run(dctx, []string{"zfs", "destroy", name}); derr != nil {
			err = errors.Join(err, fmt.Errorf("destroy temporary dataset %s: %w (remove it with: zfs destroy %s)", name, derr, name))
		}
	}()
	mp, err := zfsGet(ctx, o.Host, name, "mountpoint")
	if err != nil || !strings.HasPrefix(mp, "/") {
		return nil, fmt.Errorf("mountpoint of %s: %q %v", name, mp, err)
	}
	var out []BenchResult
	for _, kind := range []string{dataIncompressible, dataMixed} {
		path := filepath.Join(mp, kind+".bin")
		w, err := timedWrite(ctx, path, o.Size, kind, bar)
		if err != nil {
			return out, err
		}
		r, err := timedRead(ctx, path, bar)
		if err != nil {
			return out, err
		}
		// compressratio is updated when the transaction group commits; fsync
		// only reaches the intent log, so commit it first.
		if _, err := o.Host.Run(ctx, []string{"zpool", "sync", o.Pool}); err != nil {
			return out, fmt.Errorf("zpool sync %s: %w", o.Pool, err)
		}
		ratio := 1.0
		if v, err := zfsGet(ctx, o.Host, name, "compressratio"); err == nil {
			if f, perr := strconv.ParseFloat(strings.TrimSuffix(v, "x"), 64); perr == nil && f > 0 {
				ratio = f
			}
		}
		out = append(out, BenchResult{Compression: comp, Encrypted: enc, Data: kind, WriteMBps: w, ReadMBps: r, Ratio: ratio})
		if err := os.Remove(path); err != nil {
			return out, fmt.Errorf("remove %s: %w", path, err)
		}
	}
	return out, nil
}

func zfsGet(ctx context.Context, h Host, ds, prop string) (string, error) {
	res, err := h.Run(ctx, []string{"zfs", "get", "-H", "-p", "-o", "value", prop, ds})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}

const benchBlock = 1 << 20

// openDirect opens with O_DIRECT where the filesystem allows it (OpenZFS
// 2.3 does), else without: then fsync at the end still makes the write
// time include reaching the disks.
func openDirect(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_DIRECT, 0o600)
	if err == nil {
		return f, nil
	}
	return os.OpenFile(path, flag, 0o600)
}

// alignedBlock returns a 1 MiB buffer aligned to 4 KiB, as O_DIRECT needs.
func alignedBlock() []byte {
	buf := make([]byte, benchBlock+4096)
	off := 0
	if r := int(uintptrOf(buf) % 4096); r != 0 {
		off = 4096 - r
	}
	return buf[off : off+benchBlock]
}

// fillBlock writes the next block of the given kind of data. Incompressible
// data is a fast pseudo-random stream; "mixed" alternates such blocks with
// text-like blocks (log lines), like a share of documents and media.
func fillBlock(buf []byte, kind string, n int, rng *mrand.ChaCha8) {
	if kind == dataMixed && n%2 == 1 {
		line := 0
		for i := 0; i < len(buf); {
			s := fmt.Sprintf("2026-11-30T12:%02d:%02d zwatch[%d]: pool vault ONLINE, scrub finished, 0 errors, file %d of %d\n", line%60, (line/60)%60, 1000+line%7, line, n)
			i += copy(buf[i:], s)
			line++
		}
		return
	}
	_, _ = rng.Read(buf)
}

func timedWrite(ctx context.Context, path string, size uint64, kind string, bar *progressbar.ProgressBar) (float64, error) {
	f, err := openDirect(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	buf := alignedBlock()
	var seed [32]byte
	_, _ = rand.Read(seed[:])
	rng := mrand.NewChaCha8(seed)
	start := time.Now()
	direct := true
	for n, done := 0, uint64(0); done < size; n++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		fillBlock(buf, kind, n, rng)
		chunk := buf[:min(uint64(len(buf)), size-done)]
		if _, err := f.Write(chunk); err != nil {
			if direct && errors.Is(err, syscall.EINVAL) {
				// O_DIRECT refused this write (alignment): go on buffered.
				direct = false
				f.Close()
				if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
					return 0, fmt.Errorf("reopen %s: %w", path, err)
				}
				if _, err = f.Write(chunk); err == nil {
					done += uint64(len(chunk))
					progress(bar, len(chunk))
					continue
				}
			}
			return 0, fmt.Errorf("write %s: %w", path, err)
		}
		done += uint64(len(chunk))
		progress(bar, len(chunk))
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("fsync %s: %w", path, err)
	}
	return mbps(size, time.Since(start)), nil
}

func timedRead(ctx context.Context, path string, bar *progressbar.ProgressBar) (float64, error) {
	f, err := openDirect(path, os.O_RDONLY)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	buf := alignedBlock()
	start := time.Now()
	var total uint64
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := f.Read(buf)
		total += uint64(n)
		progress(bar, n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return mbps(total, time.Since(start)), nil
}

func progress(bar *progressbar.ProgressBar, n int) {
	if bar != nil {
		_ = bar.Add(n)
	}
}

func mbps(b uint64, d time.Duration) float64 {
	if d <= 0 {
		d = time.Nanosecond
	}
	return float64(b) / 1e6 / d.Seconds()
}

// writeBenchTable prints the results, then what to choose and why.
func writeBenchTable(w io.Writer, rs []BenchResult, netMBps float64) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "compression\tencrypted\tdata\twrite MB/s\tread MB/s\tratio\t")
	for _, r := range rs {
		enc := "no"
		if r.Encrypted {
			enc = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.2fx\t\n", r.Compression, enc, r.Data, r.WriteMBps, r.ReadMBps, r.Ratio)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, line := range benchAdvice(rs, netMBps) {
		fmt.Fprintln(w, line)
	}
}

// benchAdvice recommends a setting per dataset purpose and warns where a
// setting would be slower than the network the box serves.
func benchAdvice(rs []BenchResult, netMBps float64) []string {
	var out []string
	pick := func(kind string, enc bool) (BenchResult, bool) {
		var cands []BenchResult
		for _, r := range rs {
			if r.Data == kind && r.Encrypted == enc && r.Compression != "off" {
				cands = append(cands, r)
			}
		}
		if len(cands) == 0 {
			return BenchResult{}, false
		}
		// Best ratio among settings that keep up with the network; if none
		// does, the fastest writer.
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Ratio > cands[j].Ratio })
		for _, c := range cands {
			if c.WriteMBps >= netMBps && c.ReadMBps >= netMBps {
				return c, true
			}
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].WriteMBps > cands[j].WriteMBps })
		return cands[0], true
	}
	for _, enc := range []bool{false, true} {
		media, ok1 := pick(dataIncompressible, enc)
		docs, ok2 := pick(dataMixed, enc)
		if !ok1 || !ok2 {
			continue
		}
		suffix := ""
		if enc {
			suffix = " (encrypted datasets)"
		}
		// Already-compressed photos and video gain nothing from zstd; lz4
		// gives up on them early and costs almost nothing.
		mediaChoice := "lz4"
		if media.Compression != "lz4" && media.Ratio > 1.05 {
			mediaChoice = media.Compression
		}
		out = append(out, fmt.Sprintf("Recommended%s: compression=%s for photos, video and other already-compressed files; compression=%s for documents and backups (%.2fx on mixed data).",
			suffix, mediaChoice, docs.Compression, docs.Ratio))
	}
	for _, r := range rs {
		if slowest := min(r.WriteMBps, r.ReadMBps); slowest < netMBps {
			enc := ""
			if r.Encrypted {
				enc = " encrypted"
			}
			out = append(out, fmt.Sprintf("WARN: compression=%s%s on %s data runs at %.0f MB/s, slower than the %.0f MB/s the network can carry: clients will wait on the disks.",
				r.Compression, enc, r.Data, slowest, netMBps))
		}
	}
	out = append(out, "Note: recordsize=1M with compression=off stores a 1.1 MiB file in two full 1 MiB records (55 % efficiency); any compression stores the tail compactly.")
	return out
}
