package bus

import (
	"errors"
	"fmt"
	"path/filepath"
)

// StoreDir is the embedded server's JetStream directory (where the streams'
// folders are), or "" without an embedded server.
func (b *Bus) StoreDir() string {
	if b.server == nil {
		return ""
	}
	return b.server.srv.StoreDir()
}

// RestartJetStream stops and starts the embedded server's JetStream with
// the settings it had, reloading every stream and consumer from disk. After
// a write error (a full disk) a stream refuses every write until it is
// loaded again; this is how zwatch recovers without restarting the process.
func (b *Bus) RestartJetStream() error {
	if b.server == nil {
		return errors.New("restart JetStream: the bus is not embedded")
	}
	cfg := b.server.srv.JetStreamConfig()
	if cfg == nil {
		return errors.New("restart JetStream: JetStream is not running")
	}
	// EnableJetStream adds the "jetstream" folder itself.
	cfg.StoreDir = filepath.Dir(cfg.StoreDir)
	if err := b.server.srv.ShutdownJetStream(); err != nil {
		return fmt.Errorf("restart JetStream: stop: %w", err)
	}
	if err := b.server.srv.EnableJetStream(cfg); err != nil {
		return fmt.Errorf("restart JetStream: start with store %s: %w", cfg.StoreDir, err)
	}
	return nil
}
