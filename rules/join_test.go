package rules

import (
	"regexp"
	"testing"
)

// idNoiseRegexp is what trimIDNoise does by hand.
var idNoiseRegexp = regexp.MustCompile(`(-part\d+|-\d+:\d+|_\d)$`)

var idNoiseSeeds = []string{
	"ata-WDC_WD40EFRX-68N32N0_WD-WX32D7088AF1-part1",
	"nvme-Samsung_SSD_970_EVO_500GB_S466NX0M776250H_1",
	"usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0-part2",
	"usb-Hitachi_HDS721050DLE630_MSK423Y20S3HBC-0:0",
	"wwn-0x5000cca26bd9f3a8-part1",
	"scsi-SATA_ST4000VN008-2DR1_ZDH1ABCD-part12",
	"virtio-zw-disk-3", "sdc1", "x_12", "x-part_1", "-part1", "_1", "-1:2", "a-:2",
	"a-1:", "a1:2", "a--1:2", "part1", "-part", ":1", "", "_", "a_b1", "a-12:345-part6",
}

func TestTrimIDNoise(t *testing.T) {
	for _, s := range idNoiseSeeds {
		if got, want := trimIDNoise(s), idNoiseRegexp.ReplaceAllString(s, ""); got != want {
			t.Errorf("trimIDNoise(%q) = %q, the regexp gives %q", s, got, want)
		}
	}
}

func FuzzTrimIDNoise(f *testing.F) {
	for _, s := range idNoiseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimIDNoise(s), idNoiseRegexp.ReplaceAllString(s, ""); got != want {
			t.Errorf("trimIDNoise(%q) = %q, the regexp gives %q", s, got, want)
		}
	})
}
