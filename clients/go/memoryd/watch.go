package memoryd

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

const (
	watchInitialBackoff = 100 * time.Millisecond
	watchMaxBackoff     = 5 * time.Second
)

// Watcher streams EventService.Watch and resumes from its last seq.
//
// When the stream ends with UNAVAILABLE, RESOURCE_EXHAUSTED (the watcher
// fell behind), cleanly (a server shutting down) or, on a client with a
// TokenProvider, with UNAUTHENTICATED reason TOKEN_EXPIRED (servers end a
// stream when its token expires), the Watcher reopens it
// with after_seq = the seq of the last event it delivered, or of the latest
// progress notification, so every event arrives exactly once. A resume point
// older than the server's retention fails with OUT_OF_RANGE, reason
// EVENTS_COMPACTED (see ErrorOf): resync, then watch again.
//
// Next is for one goroutine; Close may be called from any.
type Watcher struct {
	events  memorydv1.EventServiceClient
	renew   bool // resume after the token expired (the client has a TokenProvider)
	filters *memorydv1.WatchRequest
	ctx     context.Context
	cancel  context.CancelFunc

	mu         sync.Mutex
	lastSeq    int64
	hasSeq     bool
	reconnects int
	failures   int // consecutive reopenings without receiving anything
	stream     memorydv1.EventService_WatchClient
	streamStop context.CancelFunc
}

// Watch starts watching the event log from req.AfterSeq (nil: from now). The
// stream has no deadline; it ends when ctx is done or Close is called.
func (c *Client) Watch(ctx context.Context, req *memorydv1.WatchRequest) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	filters := proto.CloneOf(req)
	filters.AfterSeq = nil
	w := &Watcher{events: c.Events, renew: c.renewsTokens, filters: filters, ctx: ctx, cancel: cancel}
	if req.AfterSeq != nil {
		w.lastSeq, w.hasSeq = req.GetAfterSeq(), true
	}
	return w
}

// LastSeq is the seq to resume from (last event delivered or progress seen);
// ok is false while the watch still starts from now.
func (w *Watcher) LastSeq() (seq int64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastSeq, w.hasSeq
}

// Reconnects is how many times the stream was reopened.
func (w *Watcher) Reconnects() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reconnects
}

// Started opens the stream now and returns once the server has registered
// the watch (it sends its response headers then): nothing written after it
// returns is missed.
func (w *Watcher) Started() error {
	stream, err := w.open()
	if err != nil {
		return err
	}
	_, err = stream.Header()
	return err
}

// Next blocks until the next event. It returns the context's error once the
// watch's context is done or Close was called, and the stream's error when
// the watch cannot go on.
func (w *Watcher) Next() (*memorydv1.Event, error) {
	for {
		stream, err := w.open()
		if err != nil {
			return nil, err
		}
		resp, err := stream.Recv()
		if err != nil {
			if err := w.ended(stream, err); err != nil {
				return nil, err
			}
			continue
		}
		if event := w.receive(resp); event != nil {
			return event, nil
		}
	}
}

// Close stops watching.
func (w *Watcher) Close() { w.cancel() }

func (w *Watcher) open() (memorydv1.EventService_WatchClient, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	if w.stream != nil {
		return w.stream, nil
	}
	req := proto.CloneOf(w.filters)
	if w.hasSeq {
		req.AfterSeq = proto.Int64(w.lastSeq)
	}
	ctx, stop := context.WithCancel(w.ctx)
	stream, err := w.events.Watch(ctx, req)
	if err != nil {
		stop()
		return nil, err
	}
	w.stream, w.streamStop = stream, stop
	return stream, nil
}

func (w *Watcher) receive(resp *memorydv1.WatchResponse) *memorydv1.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = 0
	if event := resp.GetEvent(); event != nil {
		w.lastSeq, w.hasSeq = event.GetSeq(), true
		return event
	}
	if progress := resp.GetProgress(); progress != nil && progress.GetLatestSeq() >= w.lastSeq {
		w.lastSeq, w.hasSeq = progress.GetLatestSeq(), true
	}
	return nil
}

// resumable says whether a stream that ended with err may be reopened from its last seq.
func (w *Watcher) resumable(err error) bool {
	switch code := status.Code(err); {
	case errors.Is(err, io.EOF), code == codes.Unavailable, code == codes.ResourceExhausted:
		return true
	case code == codes.Unauthenticated:
		return w.renew && ErrorOf(err).Reason == ReasonTokenExpired
	}
	return false
}

// ended handles the end of a stream: nil after waiting to reopen it, else the error to return.
func (w *Watcher) ended(stream memorydv1.EventService_WatchClient, err error) error {
	w.mu.Lock()
	if w.stream == stream {
		w.streamStop()
		w.stream = nil
	}
	if ctxErr := w.ctx.Err(); ctxErr != nil {
		w.mu.Unlock()
		return ctxErr
	}
	if !w.resumable(err) {
		w.mu.Unlock()
		return err
	}
	backoff := min(watchMaxBackoff, watchInitialBackoff<<min(w.failures, 16))
	w.failures++
	w.reconnects++
	w.mu.Unlock()
	select {
	case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}
