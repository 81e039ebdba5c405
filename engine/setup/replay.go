package setup

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Replay is a recorded trace sent again as the rate plan's one level
// (issue #51): every request at its recorded time (divided by Speed),
// through the API it was recorded on, with a prompt made to its recorded
// length and prefix structure and an answer as long as it was.
type Replay struct {
	// File is the trace: this app's (kovara-bench record), or Mooncake's
	// or BurstGPT's (engine/trace.Import tells them apart).
	File string
	// Speed divides the recorded times: 2 sends a day's traffic in half a
	// day, twice as dense (0: 1).
	Speed float64
	// From and To keep the requests that arrived in a part of the day,
	// by the recording's clock ("09:00", "12:30"; "" for no bound): a
	// trace of this app's only, which has each request's time.
	From, To string
}

// ReplayMaxSpeed bounds Replay.Speed.
const ReplayMaxSpeed = 1000

// SpeedOr1 is Speed, 1 where it was not given.
func (r Replay) SpeedOr1() float64 {
	if r.Speed == 0 {
		return 1
	}
	return r.Speed
}

// ParseClock reads a time of day as --from and --to take it, "09:00" or
// "9:05:30", as the offset from midnight.
func ParseClock(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"15:04", "15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, nil
		}
	}
	return 0, fmt.Errorf("%q is not a time of day: give it as 09:00 or 17:30", s)
}

// Validate refuses a replay that cannot run, one sentence per problem.
func (r Replay) Validate() error {
	var errs []error
	if strings.TrimSpace(r.File) == "" {
		errs = append(errs, errors.New("a replay needs its trace file"))
	}
	if r.Speed < 0 || r.Speed > ReplayMaxSpeed || math.IsNaN(r.Speed) {
		errs = append(errs, fmt.Errorf("speed %g is not allowed: give how many times faster than recorded, more than 0 and at most %d (1: as recorded)", r.Speed, ReplayMaxSpeed))
	}
	var from, to time.Duration
	var ferr, terr error
	if r.From != "" {
		if from, ferr = ParseClock(r.From); ferr != nil {
			errs = append(errs, fmt.Errorf("from: %w", ferr))
		}
	}
	if r.To != "" {
		if to, terr = ParseClock(r.To); terr != nil {
			errs = append(errs, fmt.Errorf("to: %w", terr))
		}
	}
	if r.From != "" && r.To != "" && ferr == nil && terr == nil && to <= from {
		errs = append(errs, fmt.Errorf("the part of the day to replay ends (%s) before it begins (%s)", r.To, r.From))
	}
	return errors.Join(errs...)
}
