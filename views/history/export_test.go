package history

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// twoDays is a store with two simulated days of nas1 in it.
func twoDays(t *testing.T) (*Store, *simulation, int64) {
	t.Helper()
	b := openBus(t, "")
	t.Cleanup(b.Close)
	s := openStore(t, b, testConfig())
	sim := newSimulation(t, s, "nas1")
	ctx := context.Background()
	sim.run(ctx, simStart, simStart+2*86400)
	sim.alertDay(ctx, simStart)
	return s, sim, simStart + 2*86400
}

func TestExportCSVAndJSON(t *testing.T) {
	s, sim, end := twoDays(t)
	ctx := context.Background()
	disk := Source(SourceDisk, sim.disks[5].Serial)
	from, to := time.Unix(simStart, 0), time.Unix(end, 0)

	var out bytes.Buffer
	if err := s.Export(ctx, &out, ExportOptions{Host: "nas1", Sources: []string{disk}, From: from, To: to, Format: FormatCSV}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "host,source,time,period_s,series,min,max,mean" {
		t.Fatalf("header %v", rows[0])
	}
	temps := 0
	for _, r := range rows[1:] {
		if r[4] != SeriesTemperature {
			continue
		}
		temps++
		at, err := time.Parse(time.RFC3339, r[2])
		if err != nil {
			t.Fatal(err)
		}
		period, _ := strconv.Atoi(r[3])
		secs := int64(period)
		if period == 0 {
			secs = smartEvery
		}
		_, _, mean := expectedTemp(5, at.Unix(), secs)
		if got, _ := strconv.ParseFloat(r[7], 64); got != mean || r[0] != "nas1" || r[1] != disk {
			t.Fatalf("row %v: mean %v, want %v", r, got, mean)
		}
	}
	if temps != 96 {
		t.Errorf("%d temperature rows over two days of 30-minute readings, want 96", temps)
	}

	out.Reset()
	if err := s.Export(ctx, &out, ExportOptions{Host: "nas1", From: from, To: to, Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sources []Result `json:"sources"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sources) != simDisks+len(simPools) {
		t.Errorf("JSON export of every source: %d, want %d", len(doc.Sources), simDisks+len(simPools))
	}
	for _, r := range doc.Sources {
		if len(r.Times) == 0 || len(r.Periods) != len(r.Times) {
			t.Errorf("%s: %d times, %d periods", r.Source, len(r.Times), len(r.Periods))
		}
	}

	out.Reset()
	if err := s.Export(ctx, &out, ExportOptions{Host: "nas1", From: from, To: to, Format: FormatCSV, Events: true}); err != nil {
		t.Fatal(err)
	}
	ev, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range ev[1:] {
		kinds[r[1]]++
	}
	if kinds[EventScrub] != len(simPools) || kinds[EventAlert] != 2 {
		t.Errorf("event rows by kind %v, want %d scrubs and 2 alert rows", kinds, len(simPools))
	}
	// Reads leave no consumer behind on the bus.
	for _, name := range []string{StreamRaw, StreamHour, StreamDay, StreamEvents} {
		info, err := mustStream(t, s, name).Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Consumers != 0 {
			t.Errorf("%s: %d consumers left after the exports", name, info.State.Consumers)
		}
	}
}

func TestExportRefusesBadInput(t *testing.T) {
	s, _, end := twoDays(t)
	ctx := context.Background()
	from, to := time.Unix(simStart, 0), time.Unix(end, 0)
	cases := []struct {
		name string
		o    ExportOptions
		want string
	}{
		{"unknown source", ExportOptions{Host: "nas1", Sources: []string{"disk/NOPE"}, From: from, To: to, Format: FormatCSV}, "pool/tank"},
		{"bad source", ExportOptions{Host: "nas1", Sources: []string{"tank"}, From: from, To: to, Format: FormatCSV}, "want disk/SERIAL or pool/NAME"},
		{"unknown host", ExportOptions{Host: "nas9", From: from, To: to, Format: FormatCSV}, `host "nas9" has no history`},
		{"bad format", ExportOptions{Host: "nas1", From: from, To: to, Format: "xml"}, "want csv or json"},
		{"backwards", ExportOptions{Host: "nas1", From: to, To: from, Format: FormatCSV}, "is before from"},
		{"too long", ExportOptions{Host: "nas1", From: from.Add(-20 * 365 * 24 * time.Hour), To: to, Format: FormatCSV}, "longer than"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		err := s.Export(ctx, &out, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	_, err := s.Query(ctx, "nas1", "disk/NOPE", from, to)
	if !errors.Is(err, ErrNoSuchSource) {
		t.Errorf("Query of an unknown source: %v, want ErrNoSuchSource", err)
	}
}
