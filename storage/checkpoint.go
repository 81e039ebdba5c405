package storage

import "github.com/kovara/desktop/engine/results"

// Checkpoint keeps one run in the library while it runs: the first save
// names its file, and every later save — after each finished level, then
// the last one — rewrites that same file, a failed save included, instead
// of starting a second. The app and the CLI both save runs through one.
type Checkpoint struct {
	lib *Library
	id  string
}

// Checkpoint starts keeping a new run.
func (l *Library) Checkpoint() *Checkpoint { return &Checkpoint{lib: l} }

// Save writes f as the run's file.
func (c *Checkpoint) Save(f *results.File) error {
	id, err := c.lib.Save(c.id, f)
	if err == nil {
		c.id = id
	}
	return err
}

// ID is the run's id in the library; "" until a save succeeded.
func (c *Checkpoint) ID() string { return c.id }
