package rules

import (
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
)

// Every kind of fact on the bus has a handler in the engine (factHandlers,
// or the declared scopes that read it), and the engine handles no kind the
// bus does not carry.
func TestFactHandlersCoverKinds(t *testing.T) {
	handlers := NewEngine(config.DefaultRules(), nil).handlers
	kinds := map[string]bool{}
	for _, k := range facts.Kinds() {
		kinds[k.Name()] = true
		if _, ok := handlers[k.Name()]; !ok {
			t.Errorf("kind %s has no handler in factHandlers, and no declared scope reads it", k.Name())
		}
	}
	for name := range handlers {
		if !kinds[name] {
			t.Errorf("factHandlers handles %s, which facts.Kinds does not list", name)
		}
	}
}
