package disk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ScanDevice is one device from `smartctl --scan-open --json`.
type ScanDevice struct {
	Name     string `json:"name"`      // /dev/sda, /dev/nvme0, /dev/bus/0
	InfoName string `json:"info_name"` // "/dev/sda [SAT]", "/dev/bus/0 [megaraid_disk_00]"
	Type     string `json:"type"`      // the -d type: sat, nvme, scsi, megaraid,0
	Protocol string `json:"protocol"`  // ATA, SCSI, NVMe
	// OpenError is set by --scan-open when the device could not be opened
	// (an unknown USB bridge, permissions).
	OpenError string `json:"open_error,omitempty"`
}

// ScanOpen parses `smartctl --scan-open --json` (or --scan). Devices that
// share a name (disks behind a RAID controller) are distinct by Type.
// Output without a devices list (no disks found) gives an empty slice.
func ScanOpen(r io.Reader) ([]ScanDevice, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("read smartctl --scan-open output: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("smartctl --scan-open output is not JSON (was --json given?)")
	}
	var out struct {
		Smartctl *struct {
			Messages []struct {
				String string `json:"string"`
			} `json:"messages"`
		} `json:"smartctl"`
		Devices []ScanDevice `json:"devices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode smartctl --scan-open JSON: %w", err)
	}
	if out.Smartctl == nil && out.Devices == nil {
		return nil, errors.New("decode smartctl --scan-open JSON: no smartctl or devices object")
	}
	devs := make([]ScanDevice, 0, len(out.Devices))
	for _, d := range out.Devices {
		if strings.TrimSpace(d.Name) == "" {
			continue
		}
		devs = append(devs, d)
	}
	return devs, nil
}
