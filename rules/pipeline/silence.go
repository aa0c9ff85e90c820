package pipeline

import (
	"time"

	"github.com/zwatch/zwatch/silence"
)

// Stage 4, silence: a firing alert an active silence mutes is not due.
// Which silence mutes which alert is package silence's to say; the stage
// holds the silences the runner read and asks it.

// SetSilences gives the stage the silences to apply; expired ones are
// harmless.
func (p *Pipeline) SetSilences(list []silence.Silence) { p.silences = list }

// SilencedBy returns the silence that keeps t from being sent at now.
func (p *Pipeline) SilencedBy(t *Tracked, now time.Time) *silence.Silence {
	if len(p.silences) == 0 {
		return nil
	}
	return silence.MutedBy(p.silences, &t.A, t.Pool, t.Serial, now)
}

func (p *Pipeline) silenced(t *Tracked, now time.Time) bool {
	return p.SilencedBy(t, now) != nil
}
