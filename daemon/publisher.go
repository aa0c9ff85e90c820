package daemon

import (
	"context"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/notifiers/delivery"
)

// reportingPublisher tells the storage watch how each fact's publish went:
// collectors are the first to meet a facts stream that refuses writes.
type reportingPublisher struct {
	collectors.Publisher
	path *delivery.Service
}

func (p reportingPublisher) Publish(ctx context.Context, kind, collector string, data any, extra ...string) error {
	err := p.Publisher.Publish(ctx, kind, collector, data, extra...)
	if ctx.Err() == nil {
		p.path.Report("facts", err)
	}
	return err
}
