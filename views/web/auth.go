package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/zwatch/zwatch/config"
)

const realm = `Basic realm="zwatch", charset="UTF-8"`

// maxVerified bounds the cache of logins already checked: a page load makes
// several requests and bcrypt costs tens of milliseconds each.
const maxVerified = 64

// basicAuth checks HTTP basic auth against bcrypt hashes.
type basicAuth struct {
	users []config.HTTPUser
	// dummy, of the first user's cost, is compared when the name is
	// unknown, so that a wrong name costs as long as a wrong password.
	dummy []byte
	// key makes the cache's entries useless to anyone who reads memory
	// without it; entries are HMACs of name and password, never either.
	key []byte

	mu       sync.Mutex
	verified map[[sha256.Size]byte]struct{}
}

func newBasicAuth(users []config.HTTPUser) *basicAuth {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cost := bcrypt.DefaultCost
	if len(users) > 0 {
		if c, err := bcrypt.Cost([]byte(users[0].PasswordHash.Value)); err == nil {
			cost = c
		}
	}
	var dummy []byte
	if len(users) > 0 {
		dummy, _ = bcrypt.GenerateFromPassword(key[:16], cost)
	}
	return &basicAuth{users: users, dummy: dummy, key: key, verified: map[[sha256.Size]byte]struct{}{}}
}

// wrap asks every request for a login when users are configured.
func (a *basicAuth) wrap(next http.Handler) http.Handler {
	if len(a.users) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, pass, ok := r.BasicAuth()
		if !ok || !a.check(name, pass) {
			w.Header().Set("WWW-Authenticate", realm)
			writeError(w, r, http.StatusUnauthorized, "a login is needed: give one of http.users' names and its password")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// check compares the name with every user's in constant time, then the
// password with bcrypt.
func (a *basicAuth) check(name, pass string) bool {
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(name))
	mac.Write([]byte{0})
	mac.Write([]byte(pass))
	var sum [sha256.Size]byte
	copy(sum[:], mac.Sum(nil))
	a.mu.Lock()
	_, known := a.verified[sum]
	a.mu.Unlock()
	if known {
		return true
	}
	hash := a.dummy
	found := 0
	for _, u := range a.users {
		if subtle.ConstantTimeCompare([]byte(u.Name), []byte(name)) == 1 && found == 0 {
			hash, found = []byte(u.PasswordHash.Value), 1
		}
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || found == 0 {
		return false
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		clear(a.verified)
	}
	a.verified[sum] = struct{}{}
	a.mu.Unlock()
	return true
}
