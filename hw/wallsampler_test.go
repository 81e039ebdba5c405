package hw

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWallEnergy: a plug's readings integrate as a GPU's do, and the
// idle power comes out: 100 W idle, then 250 W for 10 s read once a
// second — 2,500 J in all, 1,500 J above idle; a window the plug read
// fewer than three times is said to be short; one with no reading near
// its edges has no figure.
func TestWallEnergy(t *testing.T) {
	t.Parallel()
	var samples []WallSample
	for i := 0; i <= 30; i++ {
		w := 100.0
		if i >= 10 && i <= 20 {
			w = 250
		}
		samples = append(samples, WallSample{T: time.Duration(i) * time.Second, PowerW: w})
	}
	idle, ok := WallIdle(samples, 0, 9*time.Second)
	if !ok || idle != 100 {
		t.Fatalf("idle %v W, %v; want 100 W", idle, ok)
	}
	l := WallEnergy(samples, 10*time.Second, 20*time.Second, idle)
	if !l.OK || math.Abs(l.EnergyJ-2500) > 1e-9 || math.Abs(l.AboveIdleJ-1500) > 1e-9 || l.MeanPowerW != 250 || l.Short {
		t.Errorf("the load: %+v; want 2500 J, 1500 J above idle, 250 W", l)
	}
	if s := WallEnergy(samples, 12*time.Second+100*time.Millisecond, 13*time.Second+200*time.Millisecond, idle); !s.OK || !s.Short {
		t.Errorf("a window of one reading: %+v, want a figure said to be short", s)
	}
	if far := WallEnergy(samples, 100*time.Second, 110*time.Second, idle); far.OK {
		t.Errorf("a window the plug never read near: %+v, want no figure", far)
	}
	// Noise below idle is not negative work.
	if below := WallEnergy(samples, 0, 5*time.Second, 120); !below.OK || below.AboveIdleJ != 0 {
		t.Errorf("below idle: %+v, want 0 J above it", below)
	}
}

// TestWallSampler: the sampler reads the plug at its interval, every
// reading the plug's power; a reading that fails is a gap, said once,
// never 0 W.
func TestWallSampler(t *testing.T) {
	t.Parallel()
	status := captured(t, "shelly_gen2_plus1pm_shelly_getstatus_telekatz1.json")
	var n atomic.Int64
	url := standIn(t, map[string]func(w http.ResponseWriter){"/rpc/Shelly.GetStatus": func(w http.ResponseWriter) {
		if n.Add(1) == 3 {
			w.WriteHeader(http.StatusServiceUnavailable) // one reading lost
			return
		}
		w.Write(status)
	}})
	w, err := ParseWall(url, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.DetectWall(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := w.StartSampling(context.Background(), MinInterval)
	deadline := time.Now().Add(20 * time.Second)
	for len(s.Samples()) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	got := s.Samples()
	if len(got) < 5 {
		t.Fatalf("%d readings in 20 s", len(got))
	}
	for i, r := range got {
		if r.PowerW != 28.2 || (i > 0 && r.T <= got[i-1].T) {
			t.Errorf("reading %d: %+v", i, r)
		}
	}
	if warns := s.Warnings(); len(warns) != 1 || !strings.Contains(warns[0], "missed a reading") {
		t.Errorf("warnings %q, want the lost reading said once", warns)
	}
}

// TestWallSamplerOnePerUpdate: a Home Assistant sensor read faster than
// it reports gives one sample per report (its last_reported moves), not
// one per reading: the same measurement read again is left out and
// counted.
func TestWallSamplerOnePerUpdate(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	url := standIn(t, map[string]func(w http.ResponseWriter){"/api/states/sensor.rack_power": func(w http.ResponseWriter) {
		// A new report every third reading, as a sensor that updates
		// every few seconds reads when polled each second.
		k := (n.Add(1) - 1) / 3
		fmt.Fprintf(w, `{"entity_id":"sensor.rack_power","state":"%d","attributes":{"unit_of_measurement":"W","device_class":"power"},"last_changed":"2026-12-07T10:00:00+00:00","last_reported":"2026-12-07T10:00:%02d+00:00","last_updated":"2026-12-07T10:00:00+00:00"}`, 100+k, k)
	}})
	w, err := ParseWall("ha://"+strings.TrimPrefix(url, "http://")+"/sensor.rack_power", "token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.DetectWall(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := w.StartSampling(context.Background(), MinInterval)
	deadline := time.Now().Add(20 * time.Second)
	for n.Load() < 12 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	got := s.Samples()
	if len(got) < 4 {
		t.Fatalf("%d samples from %d readings", len(got), n.Load())
	}
	for i, r := range got {
		if r.PowerW != float64(100+i) {
			t.Errorf("sample %d is %.0f W, want %d W: one per report", i, r.PowerW, 100+i)
		}
	}
	// Two repeats of every report the sampler read whole: all but its
	// first (DetectWall read part of it) and its last (the stop may cut
	// it).
	if s.Repeats() < 2*(len(got)-2) {
		t.Errorf("%d repeats left out for %d samples, want two per report read whole", s.Repeats(), len(got))
	}
}
