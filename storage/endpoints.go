package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/hw"
)

// SavedEndpoint is a server the user benchmarks again and again. Its API
// key is not here: it lives in the OS keyring under the endpoint's name.
type SavedEndpoint struct {
	Name      string
	URL       string
	VerifyTLS bool
	Timeout   time.Duration // for checks; 0 means the default
	GPU       string        // telemetry source: "", "local", "ssh://user@host", "http://host:9400/metrics"
	Wall      string        // the smart plug on the server's power lead (hw.ParseWall); "" for none
	// NoKey: saved without an API key, so the keyring need not be asked
	// (a desktop without one would be told at every run that it cannot
	// keep a key nobody gave). Endpoints saved before this was kept
	// read false and ask the keyring as before.
	NoKey bool
}

// Key is the endpoint's API key from keys: "" with ErrNoKey when it was
// saved without one, without asking the keyring.
func (e SavedEndpoint) Key(keys Keys) (string, error) {
	if e.NoKey {
		return "", ErrNoKey
	}
	return keys.Get(e.Name)
}

// WallAccount is the keyring account of an endpoint's wall plug token
// (a Home Assistant sensor's long-lived token): beside its API key,
// never in endpoints.yaml.
func WallAccount(name string) string { return name + " (wall plug token)" }

// NeedsWallToken says the endpoint's plug is a Home Assistant sensor,
// which answers only with a token.
func (e SavedEndpoint) NeedsWallToken() bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(e.Wall)), "ha://")
}

// WallToken is the endpoint's wall plug token from keys: "" with
// ErrNoKey when its plug needs none or none was kept.
func (e SavedEndpoint) WallToken(keys Keys) (string, error) {
	if !e.NeedsWallToken() {
		return "", ErrNoKey
	}
	return keys.Get(WallAccount(e.Name))
}

// endpointYAML is the file form of a SavedEndpoint.
type endpointYAML struct {
	Name      string   `yaml:"name"`
	URL       string   `yaml:"url"`
	VerifyTLS *bool    `yaml:"verify_tls,omitempty"`
	TimeoutS  *float64 `yaml:"timeout_s,omitempty"`
	GPU       string   `yaml:"gpu,omitempty"`
	Wall      string   `yaml:"wall,omitempty"`
	NoKey     bool     `yaml:"no_key,omitempty"`
}

type endpointsFile struct {
	Endpoints []endpointYAML `yaml:"endpoints"`
}

// Validate says what is wrong with an endpoint before it is saved.
func (e SavedEndpoint) Validate() error {
	var errs []error
	if strings.TrimSpace(e.Name) == "" {
		errs = append(errs, errors.New("give the endpoint a name"))
	} else if len(e.Name) > 80 {
		errs = append(errs, errors.New("the name is longer than 80 characters"))
	}
	if _, err := setup.ParseBase(e.URL); err != nil {
		errs = append(errs, err)
	}
	if e.Timeout < 0 {
		errs = append(errs, errors.New("the timeout must be more than 0"))
	}
	if _, err := hw.ParseSource(e.GPU); err != nil {
		errs = append(errs, fmt.Errorf("GPU telemetry: %w", err))
	}
	if e.Wall != "" {
		if _, err := hw.ParseWall(e.Wall, ""); err != nil {
			errs = append(errs, fmt.Errorf("wall power: %w", err))
		}
	}
	return errors.Join(errs...)
}

// WithKey is the saved endpoint as a run takes it, with its key.
func (e SavedEndpoint) WithKey(key string) setup.Endpoint {
	return setup.Endpoint{Name: e.Name, URL: e.URL, APIKey: key, InsecureTLS: !e.VerifyTLS, Timeout: e.Timeout, GPU: e.GPU, Wall: e.Wall}
}

// EndpointStore keeps the saved endpoints in endpoints.yaml in the config
// folder.
type EndpointStore struct {
	path string
	mu   sync.Mutex
}

// OpenEndpoints opens the store in configDir (the file appears on the
// first save).
func OpenEndpoints(configDir string) *EndpointStore {
	return &EndpointStore{path: filepath.Join(configDir, "endpoints.yaml")}
}

// List returns the saved endpoints sorted by name.
func (s *EndpointStore) List() ([]SavedEndpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read()
}

// Get returns the endpoint with this name.
func (s *EndpointStore) Get(name string) (SavedEndpoint, bool, error) {
	list, err := s.List()
	if err != nil {
		return SavedEndpoint{}, false, err
	}
	for _, e := range list {
		if e.Name == name {
			return e, true, nil
		}
	}
	return SavedEndpoint{}, false, nil
}

// Put adds e, or replaces the endpoint called oldName (renaming it).
func (s *EndpointStore) Put(e SavedEndpoint, oldName string) error {
	if err := e.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.read()
	if err != nil {
		return err
	}
	out := list[:0]
	for _, x := range list {
		switch {
		case x.Name == oldName && oldName != "":
		case x.Name == e.Name:
			if oldName != e.Name {
				return fmt.Errorf("an endpoint called %q already exists", e.Name)
			}
		default:
			out = append(out, x)
		}
	}
	return s.write(append(out, e))
}

// Delete removes the endpoint with this name (no error if there is none).
func (s *EndpointStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.read()
	if err != nil {
		return err
	}
	out := list[:0]
	for _, x := range list {
		if x.Name != name {
			out = append(out, x)
		}
	}
	return s.write(out)
}

func (s *EndpointStore) read() ([]SavedEndpoint, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", s.path, err)
	}
	var f endpointsFile
	if err := decodeYAMLStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	out := make([]SavedEndpoint, 0, len(f.Endpoints))
	for _, y := range f.Endpoints {
		e := SavedEndpoint{Name: y.Name, URL: y.URL, VerifyTLS: y.VerifyTLS == nil || *y.VerifyTLS, GPU: y.GPU, Wall: y.Wall, NoKey: y.NoKey}
		if y.TimeoutS != nil {
			e.Timeout = time.Duration(*y.TimeoutS * float64(time.Second))
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *EndpointStore) write(list []SavedEndpoint) error {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var f endpointsFile
	f.Endpoints = []endpointYAML{}
	for _, e := range list {
		y := endpointYAML{Name: e.Name, URL: e.URL, GPU: e.GPU, Wall: e.Wall, NoKey: e.NoKey}
		if !e.VerifyTLS {
			no := false
			y.VerifyTLS = &no
		}
		if e.Timeout > 0 {
			t := e.Timeout.Seconds()
			y.TimeoutS = &t
		}
		f.Endpoints = append(f.Endpoints, y)
	}
	data, err := encodeYAML(f)
	if err != nil {
		return err
	}
	header := "# Saved endpoints of Kovara Desktop. API keys are not here: they are in\n# the system keyring, one entry per endpoint name.\n"
	return WriteFileAtomic(s.path, append([]byte(header), data...), 0o600)
}
