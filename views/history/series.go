package history

import (
	"github.com/zwatch/zwatch/model/zfs"
)

// smartReading is the part of a smart.Report (its JSON, the payload of
// zwatch.v1.<host>.smart.<serial>) the history keeps: decoding only these
// fields makes a SMART fact several times cheaper to read.
type smartReading struct {
	Serial       string  `json:"serial"`
	TemperatureC *int    `json:"temperature_c"`
	PowerOnHours *uint64 `json:"power_on_hours"`
	Attributes   []struct {
		ID  int    `json:"id"`
		Raw uint64 `json:"raw"`
	} `json:"attributes"`
	NVMe *struct {
		AvailableSpare uint64 `json:"available_spare"`
		PercentageUsed uint64 `json:"percentage_used"`
		MediaErrors    uint64 `json:"media_errors"`
	} `json:"nvme"`
	InStandby bool `json:"in_standby"`
}

// ataSeries maps the ATA attributes the rules use to their series; the
// raw value is kept, as it is what the rules and a person read.
var ataSeries = map[int]string{
	5:   SeriesReallocated,
	187: SeriesReportedUncorrect,
	188: SeriesCommandTimeout,
	197: SeriesPending,
	198: SeriesOfflineUncorrectable,
	199: SeriesUDMACRCErrors,
}

// diskValues are the series of one SMART reading; none for a disk in
// standby, whose reading carries no fresh values.
func diskValues(r *smartReading) map[string]float64 {
	if r.InStandby {
		return nil
	}
	v := map[string]float64{}
	if r.TemperatureC != nil {
		v[SeriesTemperature] = float64(*r.TemperatureC)
	}
	if r.PowerOnHours != nil {
		v[SeriesPowerOnHours] = float64(*r.PowerOnHours)
	}
	for _, a := range r.Attributes {
		if name, ok := ataSeries[a.ID]; ok {
			v[name] = float64(a.Raw)
		}
	}
	if n := r.NVMe; n != nil {
		v[SeriesMediaErrors] = float64(n.MediaErrors)
		v[SeriesAvailableSpare] = float64(n.AvailableSpare)
		v[SeriesPercentageUsed] = float64(n.PercentageUsed)
	}
	return v
}

// capacityValues are a pool's series from zpool list.
func capacityValues(p zfs.PoolList) map[string]float64 {
	v := map[string]float64{SeriesCapacity: p.CapacityPct}
	if p.SizeBytes > 0 {
		v[SeriesSizeBytes] = float64(p.SizeBytes)
		v[SeriesAllocBytes] = float64(p.AllocBytes)
	}
	if p.FragmentPct != nil {
		v[SeriesFragmentation] = *p.FragmentPct
	}
	return v
}

// statusValues are a pool's error counters from zpool status: totals over
// its leaves, and each vdev's counters that are not zero.
func statusValues(p *zfs.Pool) map[string]float64 {
	v := map[string]float64{}
	var read, write, cksum uint64
	var walk func(vd *zfs.Vdev)
	walk = func(vd *zfs.Vdev) {
		if vd == nil {
			return
		}
		if vd.IsLeaf() {
			read += vd.ReadErrors
			write += vd.WriteErrors
			cksum += vd.ChecksumErrors
		}
		for counter, n := range map[string]uint64{SeriesReadErrors: vd.ReadErrors, SeriesWriteErrors: vd.WriteErrors, SeriesChecksumErrors: vd.ChecksumErrors} {
			if n > 0 {
				v[VdevSeries(vd.Name, counter)] = float64(n)
			}
		}
		for _, c := range vd.Children {
			walk(c)
		}
	}
	for _, class := range [][]*zfs.Vdev{p.Vdevs, p.Logs, p.Cache, p.Spares, p.Special, p.Dedup} {
		for _, vd := range class {
			walk(vd)
		}
	}
	v[SeriesReadErrors] = float64(read)
	v[SeriesWriteErrors] = float64(write)
	v[SeriesChecksumErrors] = float64(cksum)
	return v
}
