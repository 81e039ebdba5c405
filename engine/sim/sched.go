package sim

import (
	"context"
	"sync"
)

// scheduler admits at most limit requests at once; later ones wait in
// strict arrival order. A released slot is handed straight to the head of
// the queue, so nobody can overtake a waiter.
type scheduler struct {
	mu     sync.Mutex
	limit  int
	active int
	queue  []*ticket
}

type ticket struct {
	ready   chan struct{}
	granted bool // set under mu when the slot is handed over
}

// acquire blocks until a slot is free, the context ends or stop closes.
func (q *scheduler) acquire(ctx context.Context, stop <-chan struct{}) error {
	q.mu.Lock()
	if q.active < q.limit && len(q.queue) == 0 {
		q.active++
		q.mu.Unlock()
		return nil
	}
	t := &ticket{ready: make(chan struct{})}
	q.queue = append(q.queue, t)
	q.mu.Unlock()

	var err error
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-stop:
		err = errShutdown
	}
	q.mu.Lock()
	if t.granted {
		// The slot arrived while we were giving up: pass it on.
		q.mu.Unlock()
		q.release()
		return err
	}
	for i, x := range q.queue {
		if x == t {
			copy(q.queue[i:], q.queue[i+1:])
			q.queue[len(q.queue)-1] = nil
			q.queue = q.queue[:len(q.queue)-1]
			break
		}
	}
	q.mu.Unlock()
	return err
}

// release frees a slot, handing it to the oldest waiter if there is one.
func (q *scheduler) release() {
	q.mu.Lock()
	if len(q.queue) > 0 {
		t := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		t.granted = true
		close(t.ready)
	} else {
		q.active--
	}
	q.mu.Unlock()
}

// counts reports admitted and waiting requests.
func (q *scheduler) counts() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active, len(q.queue)
}
