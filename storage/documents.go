package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kovara/desktop/engine/results"
)

// The library keeps five kinds of document: Kovara results files, and
// this app's three-stage, speculative-decoding, capacity and context
// results. They share the
// folder, the index and the history; Summary.Plan tells them apart.
// Summary.Plan is one of results.Plan*, named here too for the library's
// users.
const (
	PlanKovara   = results.PlanKovara
	PlanStages   = results.PlanStages
	PlanSpecDec  = results.PlanSpecDec
	PlanCapacity = results.PlanCapacity
	PlanContext  = results.PlanContext
)

// SaveStages saves a three-stage result under id (a new id when empty).
func (l *Library) SaveStages(id string, r *results.StagesResult) (string, error) {
	data, err := results.MarshalStages(r)
	if err != nil {
		return "", err
	}
	return l.saveDocument(id, r.CreatedAt, r.Model, data, func(string) Summary { return summarizeStages(r) })
}

// SaveSpecDec saves a speculative-decoding result under id (new when empty).
func (l *Library) SaveSpecDec(id string, r *results.SpecDecResult) (string, error) {
	data, err := results.MarshalSpecDec(r)
	if err != nil {
		return "", err
	}
	return l.saveDocument(id, r.CreatedAt, r.Model, data, func(string) Summary { return summarizeSpecDec(r) })
}

// SaveCapacity saves a capacity result under id (new when empty).
func (l *Library) SaveCapacity(id string, r *results.CapacityResult) (string, error) {
	data, err := results.MarshalCapacity(r)
	if err != nil {
		return "", err
	}
	return l.saveDocument(id, r.CreatedAt, r.Model, data, func(string) Summary { return summarizeCapacity(r) })
}

// SaveContext saves a context result under id (new when empty).
func (l *Library) SaveContext(id string, r *results.ContextResult) (string, error) {
	data, err := results.MarshalContext(r)
	if err != nil {
		return "", err
	}
	return l.saveDocument(id, r.CreatedAt, r.Model, data, func(string) Summary { return summarizeContext(r) })
}

// saveDocument writes a document of any kind atomically and updates the
// index. The run is saved once its file is: the index is only a cache, so
// when it cannot be written (a disk that filled up just now) the next List
// rebuilds the entry from the file.
func (l *Library) saveDocument(id, createdAt, model string, data []byte, sum func(string) Summary) (string, error) {
	if id == "" {
		t, _ := time.Parse(time.RFC3339, createdAt)
		id = NewID(t, model)
	}
	path := l.Path(id)
	if err := WriteFileAtomic(path, data, 0o644); err != nil {
		return "", err
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", diskError("read back "+path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := sum(id)
	s.ID, s.Size, s.ModTime = id, info.Size(), info.ModTime().UnixNano()
	_ = l.writeIndex(upsertAll(l.readIndex(), []Summary{s}))
	return id, nil
}

// LoadStages reads run id as a three-stage result.
func (l *Library) LoadStages(id string) (*results.StagesResult, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return nil, err
	}
	return results.DecodeStages(data)
}

// LoadSpecDec reads run id as a speculative-decoding result.
func (l *Library) LoadSpecDec(id string) (*results.SpecDecResult, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return nil, err
	}
	return results.DecodeSpecDec(data)
}

// LoadCapacity reads run id as a capacity result.
func (l *Library) LoadCapacity(id string) (*results.CapacityResult, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return nil, err
	}
	return results.DecodeCapacity(data)
}

// LoadContext reads run id as a context result.
func (l *Library) LoadContext(id string) (*results.ContextResult, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return nil, err
	}
	return results.DecodeContext(data)
}

func (l *Library) loadBytes(id string) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return ReadBounded(l.Path(id), maxImportSize, resultsFileKind)
}

// RunKinds are the kinds of run the library holds — a Kovara run is a
// hardware or a protocol run, then the other plans' documents — each with
// the name History, its filter and kovara-bench history give it.
var RunKinds = []struct{ Kind, Name string }{
	{results.RunKindHardware, "hardware"},
	{results.RunKindProtocol, "protocol"},
	{PlanCapacity, "capacity"},
	{PlanStages, "three stages"},
	{PlanSpecDec, "spec decoding"},
	{PlanContext, "context"},
}

// KindName is a run kind (Summary.RunKind) as people read it.
func KindName(kind string) string {
	for _, k := range RunKinds {
		if k.Kind == kind {
			return k.Name
		}
	}
	return kind
}

// ReadArg reads the bytes of a run named on a command line: a file path,
// or an id of the library (opened on first need through open).
func ReadArg(arg string, lib **Library, open func() (*Library, error)) ([]byte, error) {
	if isFile(arg) {
		return ReadBounded(arg, maxImportSize, resultsFileKind)
	}
	if *lib == nil {
		l, err := open()
		if err != nil {
			return nil, fmt.Errorf("%s is not a file, and the library cannot be opened: %w", arg, err)
		}
		*lib = l
	}
	data, err := (*lib).loadBytes(arg)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a results file nor a run in the library (%v)", arg, err)
	}
	return data, nil
}

// decodeAny reads any of the library's kinds into a summary.
func decodeAny(id string, data []byte) Summary {
	d, err := DecodeDocument(data)
	if err != nil {
		return Summary{ID: id, Unreadable: err.Error()}
	}
	var s Summary
	switch {
	case d.Stages != nil:
		s = summarizeStages(d.Stages)
	case d.SpecDec != nil:
		s = summarizeSpecDec(d.SpecDec)
	case d.Capacity != nil:
		s = summarizeCapacity(d.Capacity)
	case d.Context != nil:
		s = summarizeContext(d.Context)
	default:
		return summarize(id, d.File)
	}
	s.ID = id
	return s
}

func engineName(d results.Detection) string {
	if d.Family == "" {
		return ""
	}
	if d.Version != "" {
		return d.Family + " " + d.Version
	}
	return d.Family
}

func summarizeStages(r *results.StagesResult) Summary {
	s := Summary{
		CreatedAt: r.CreatedAt, EndpointName: r.Local.EndpointName, Model: r.Model,
		Engine: engineName(r.Engine), RunKind: PlanStages, Plan: PlanStages,
		Complete: r.Complete, Simulated: r.Local.Simulated,
	}
	if r.Users != nil {
		s.Levels = []int{r.Users.Users}
		if r.Users.AggregateTPS != nil {
			s.BestOutputTPS = *r.Users.AggregateTPS
		}
	}
	return s
}

func summarizeSpecDec(r *results.SpecDecResult) Summary {
	s := Summary{
		CreatedAt: r.CreatedAt, EndpointName: r.Local.EndpointName, Model: r.Model,
		Engine: engineName(r.Engine), RunKind: PlanSpecDec, Plan: PlanSpecDec,
		Complete: r.Complete, Simulated: r.Local.Simulated,
	}
	for _, lv := range r.Levels {
		s.Levels = append(s.Levels, lv.Concurrency)
		if lv.OutputTPS != nil && *lv.OutputTPS > s.BestOutputTPS {
			s.BestOutputTPS = *lv.OutputTPS
		}
	}
	return s
}

func summarizeCapacity(r *results.CapacityResult) Summary {
	s := Summary{
		CreatedAt: r.CreatedAt, EndpointName: r.Local.EndpointName, Model: r.Model,
		RunKind: PlanCapacity, Plan: PlanCapacity, Complete: r.Complete, Simulated: r.Local.Simulated,
	}
	if d := r.Local.Detection; d != nil {
		s.Engine = engineName(*d)
	}
	for _, p := range r.Probes {
		if !slices.Contains(s.Levels, p.Concurrency) {
			s.Levels = append(s.Levels, p.Concurrency)
		}
		if p.OutputTPS > s.BestOutputTPS {
			s.BestOutputTPS = p.OutputTPS
		}
	}
	slices.Sort(s.Levels)
	s.Capacity = capacityMark(r)
	s.Problems, _ = results.Split(r.Warnings())
	return s
}

// capacityMark is a capacity result's answer in a few characters, for
// History: "8 users", "4–6 users?", "≥ 256 users", "none".
func capacityMark(r *results.CapacityResult) string {
	a := r.Answer
	switch {
	case a.Capacity == 0:
		return "none"
	case a.Uncertain:
		return fmt.Sprintf("%d–%d users?", a.Capacity, a.RangeHigh)
	case a.ReachedMax:
		return fmt.Sprintf("≥ %d users", a.Capacity)
	}
	return fmt.Sprintf("%d users", a.Capacity)
}

// summarizeContext lists a context result: its depths as the levels and
// its best decode speed as the best tok/s.
func summarizeContext(r *results.ContextResult) Summary {
	s := Summary{
		CreatedAt: r.CreatedAt, EndpointName: r.Local.EndpointName, Model: r.Model,
		Engine: engineName(r.Engine), RunKind: PlanContext, Plan: PlanContext,
		Complete: r.Complete, Simulated: r.Local.Simulated, Problems: r.Problems(),
	}
	for _, d := range r.Depths {
		s.Levels = append(s.Levels, d.Depth)
		if d.DecodeTPS != nil && d.DecodeTPS.P50 > s.BestOutputTPS {
			s.BestOutputTPS = d.DecodeTPS.P50
		}
	}
	return s
}

// importDocument validates data of any kind, for Import.
func importDocument(path string, data []byte) (Summary, error) {
	s := decodeAny("", data)
	if s.Unreadable != "" {
		return s, fmt.Errorf("%s cannot be imported: %s", filepath.Base(path), s.Unreadable)
	}
	return s, nil
}
