package units

import "testing"

func TestDecimal(t *testing.T) {
	for in, want := range map[uint64]string{0: "0 B", 999: "999 B", 1000: "1 kB", 4000787030016: "4 TB", 1073741824: "1.07 GB", 18446744073709551615: "18.4 EB"} {
		if got := Decimal(in); got != want {
			t.Errorf("Decimal(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestIEC(t *testing.T) {
	for in, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 134127616: "127.9 MiB", 1 << 40: "1.0 TiB", 18446744073709551615: "16.0 EiB"} {
		if got := IEC(in); got != want {
			t.Errorf("IEC(%d) = %q, want %q", in, got, want)
		}
	}
}
