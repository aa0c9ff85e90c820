// Command sink is the e2e webhook receiver and its query tool.
//
//	sink serve ADDR FILE
//	    (in the guest) accept POSTs on ADDR; append one JSON line per request to FILE:
//	    {"recv_ns": <guest unix ns at receipt>, "payload": <the body as sent>}
//
//	sink tap URL LABEL [CONTAINS]...
//	    (in the guest) tap the button LABEL of the newest Telegram message holding every
//	    CONTAINS, through the serving sink's Telegram fake (telegram.go); prints the tap's
//	    guest time. The fake serves /tg/bot<token>/<method> and logs to tg.jsonl beside FILE.
//
//	sink find FILE [--after NS] [--before NS] [--status firing|resolved] [--alert NAME[=STATE]]...
//	          [--contains TEXT]... [--severity S] [--count] [--json]
//	    (on the host) print the first matching notification: "<recv_ns> <line number>"
//	    (exit 1 when none). --count prints the number of matches instead. --json prints
//	    the matching payloads. --contains looks in title, summary, text and every alert's
//	    summary/description; --alert NAME[=STATE] requires an alert of that name
//	    (and state) in notification.alerts.
//
// The payload is zwatch's notifiers.WebhookPayload, read with that type so a
// change of the payload breaks the e2e build instead of silently matching nothing.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/notifiers"
)

type line struct {
	RecvNS  int64           `json:"recv_ns"`
	Payload json.RawMessage `json:"payload"`
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		if len(os.Args) != 4 {
			usage()
		}
		serve(os.Args[2], os.Args[3])
	case "find":
		os.Exit(find(os.Args[2:]))
	case "tap":
		os.Exit(tapCmd(os.Args[2:]))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sink serve ADDR FILE | sink tap URL LABEL [CONTAINS]... | sink find FILE [--after NS] [--before NS] [--status S] [--alert NAME[=STATE]]... [--contains TEXT]... [--severity S] [--count] [--json]")
	os.Exit(2)
}

func serve(addr, file string) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tg, err := newTGFake(filepath.Join(filepath.Dir(file), "tg.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/tg/", tg.bot)
	http.HandleFunc("/tg-tap", tg.tap)
	var mu sync.Mutex
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if !json.Valid(body) {
			body, _ = json.Marshal(string(body))
		}
		b, _ := json.Marshal(line{RecvNS: now, Payload: body})
		mu.Lock()
		_, err = f.Write(append(b, '\n')) // O_APPEND over 9p: the host sees it at once
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	fmt.Fprintf(os.Stderr, "sink: listening on %s, writing %s\n", addr, file)
	if err := http.ListenAndServe(addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type alertReq struct{ name, state string }

func find(args []string) int {
	if len(args) < 1 {
		usage()
	}
	file := args[0]
	var (
		after    int64
		before   int64 // 0: no bound
		status   string
		severity string
		contains []string
		alerts   []alertReq
		count    bool
		asJSON   bool
	)
	for i := 1; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 >= len(args) {
				usage()
			}
			i++
			return args[i]
		}
		switch a {
		case "--after":
			v, err := strconv.ParseInt(val(), 10, 64)
			if err != nil {
				usage()
			}
			after = v
		case "--before":
			v, err := strconv.ParseInt(val(), 10, 64)
			if err != nil {
				usage()
			}
			before = v
		case "--status":
			status = val()
		case "--severity":
			severity = val()
		case "--contains":
			contains = append(contains, val())
		case "--alert":
			n, s, _ := strings.Cut(val(), "=")
			alerts = append(alerts, alertReq{n, s})
		case "--count":
			count = true
		case "--json":
			asJSON = true
		default:
			usage()
		}
	}
	f, err := os.Open(file)
	if err != nil {
		if count {
			fmt.Println(0)
			return 0
		}
		return 1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n, matched := 0, 0
	for sc.Scan() {
		n++
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line being written
		}
		if l.RecvNS < after || before > 0 && l.RecvNS >= before {
			continue
		}
		var p notifiers.WebhookPayload
		if json.Unmarshal(l.Payload, &p) != nil {
			continue
		}
		if status != "" && p.Status != status {
			continue
		}
		if severity != "" && p.Severity != severity {
			continue
		}
		hay := p.Title + "\n" + p.Summary + "\n" + p.Text
		for _, a := range p.Notification.Alerts {
			hay += "\n" + a.Summary + "\n" + a.Description
		}
		ok := true
		for _, c := range contains {
			if !strings.Contains(hay, c) {
				ok = false
				break
			}
		}
		for _, want := range alerts {
			found := false
			for _, a := range p.Notification.Alerts {
				if a.Name == want.name && (want.state == "" || string(a.State) == want.state) {
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		matched++
		switch {
		case asJSON:
			fmt.Println(string(l.Payload))
		case !count:
			fmt.Printf("%d %d\n", l.RecvNS, n)
			return 0
		}
	}
	if count {
		fmt.Println(matched)
		return 0
	}
	if matched == 0 {
		return 1
	}
	return 0
}
