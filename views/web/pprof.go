package web

import (
	"net/http"
	"net/http/pprof"
)

// mountPprof serves Go's runtime profiles (http.pprof, loopback only): the
// index and every named profile (heap, allocs, goroutine...) under
// /debug/pprof/, and a CPU profile of ?seconds=N at /debug/pprof/profile.
// Only GET reaches them (onlyReads), each behind the page's login.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
}
