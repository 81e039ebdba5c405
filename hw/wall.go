package hw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A wall source is a smart plug (or a home-automation sensor) on the
// server's power lead: what the electricity bill sees, the CPU, RAM,
// fans and the power supply's loss with the GPUs (issue #49). One
// reading is the plug's power now, in watts, as its own API says it:
//
//   - Shelly Gen2 and later (RPC): GET /rpc/Shelly.GetStatus, the first
//     metered component's "apower" (switch:N, pm1:N) or an energy
//     meter's "total_act_power" (em:N), in W;
//   - Shelly Gen1: GET /status, "meters[0].power" in W (is_valid false:
//     no reading);
//   - Tasmota: GET /cm?cmnd=Status%208, "StatusSNS.ENERGY.Power" in W,
//     one number or one a channel (summed);
//   - Home Assistant: GET /api/states/<entity> with a long-lived token, the
//     state in the sensor's unit_of_measurement (W or kW).
//
// A plug that answers without a power figure (an unmetered Shelly
// switch, a Tasmota without its energy driver) gives no reading, never
// 0 W. The family is found from what the plug answers (DetectWall), in
// that order; a Home Assistant sensor is named as
// ha://host:8123/sensor.name.

// WallFamily is the kind of plug answering.
type WallFamily string

// The plug families read.
const (
	WallShellyGen2    WallFamily = "shelly-gen2"
	WallShellyGen1    WallFamily = "shelly-gen1"
	WallTasmota       WallFamily = "tasmota"
	WallHomeAssistant WallFamily = "home-assistant"
)

// wallNames are the families as a person says them.
var wallNames = map[WallFamily]string{
	WallShellyGen2: "Shelly (Gen2 or later)", WallShellyGen1: "Shelly Gen1",
	WallTasmota: "Tasmota", WallHomeAssistant: "Home Assistant",
}

// Name is the family as a person says it.
func (f WallFamily) Name() string {
	if n, ok := wallNames[f]; ok {
		return n
	}
	return string(f)
}

// ErrNoWallPower says the plug answered without a power figure.
var ErrNoWallPower = errors.New("the plug answered but reports no power (an unmetered switch, or its energy meter is off)")

// WallReading is one reading of a plug.
type WallReading struct {
	PowerW float64
	// Where names the reading's component ("switch:0", "ENERGY", the
	// Home Assistant entity), for the Test's sentence.
	Where string
	// Updated is when the plug itself last measured, where it says
	// (Home Assistant's last_reported, else last_updated), as it wrote
	// it; "" where it does not. Two readings with the same stamp are one
	// measurement read twice (WallSampler keeps the first).
	Updated string
}

// parseShellyGen2 reads Shelly.GetStatus (or one component's
// GetStatus): the first metered component in name order.
func parseShellyGen2(body []byte) (WallReading, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return WallReading{}, fmt.Errorf("the plug's answer is not Shelly's JSON: %w", err)
	}
	if code, ok := all["code"]; ok {
		var msg struct {
			Message string `json:"message"`
		}
		json.Unmarshal(body, &msg)
		return WallReading{}, fmt.Errorf("the Shelly answered error %s: %s", code, msg.Message)
	}
	// One component's own status (Switch.GetStatus?id=0) is read as is.
	if _, ok := all["apower"]; ok {
		all = map[string]json.RawMessage{"switch": body}
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		comp, _, _ := strings.Cut(k, ":")
		if comp != "switch" && comp != "pm1" && comp != "em" && comp != "em1" {
			continue
		}
		var c struct {
			APower   *float64 `json:"apower"`
			ActPower *float64 `json:"act_power"`
			Total    *float64 `json:"total_act_power"`
		}
		if json.Unmarshal(all[k], &c) != nil {
			continue
		}
		for _, w := range []*float64{c.APower, c.Total, c.ActPower} {
			if w != nil {
				return checked(WallReading{PowerW: *w, Where: k})
			}
		}
	}
	return WallReading{}, ErrNoWallPower
}

// parseShellyGen1 reads a Gen1 /status: meters[0].power.
func parseShellyGen1(body []byte) (WallReading, error) {
	var st struct {
		Meters []struct {
			Power   *float64 `json:"power"`
			IsValid *bool    `json:"is_valid"`
		} `json:"meters"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return WallReading{}, fmt.Errorf("the plug's answer is not Shelly's JSON: %w", err)
	}
	if len(st.Meters) == 0 || st.Meters[0].Power == nil || (st.Meters[0].IsValid != nil && !*st.Meters[0].IsValid) {
		return WallReading{}, ErrNoWallPower
	}
	return checked(WallReading{PowerW: *st.Meters[0].Power, Where: "meters[0]"})
}

// parseTasmota reads Status 8: StatusSNS.ENERGY.Power, a number or one
// a channel (a multi-channel meter's channels summed).
func parseTasmota(body []byte) (WallReading, error) {
	var st struct {
		SNS *struct {
			Energy *struct {
				Power json.RawMessage `json:"Power"`
			} `json:"ENERGY"`
		} `json:"StatusSNS"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return WallReading{}, fmt.Errorf("the plug's answer is not Tasmota's JSON: %w", err)
	}
	if st.SNS == nil || st.SNS.Energy == nil || len(st.SNS.Energy.Power) == 0 {
		return WallReading{}, ErrNoWallPower
	}
	var one float64
	if json.Unmarshal(st.SNS.Energy.Power, &one) == nil {
		return checked(WallReading{PowerW: one, Where: "ENERGY"})
	}
	var each []float64
	if json.Unmarshal(st.SNS.Energy.Power, &each) != nil || len(each) == 0 {
		return WallReading{}, errors.New("the Tasmota's ENERGY.Power is neither a number nor one a channel")
	}
	sum := 0.0
	for _, w := range each {
		sum += w
	}
	return checked(WallReading{PowerW: sum, Where: fmt.Sprintf("ENERGY (%d channels)", len(each))})
}

// parseHomeAssistant reads a sensor's state: its number in the sensor's
// unit (W or kW); "unavailable" or "unknown" is no reading.
func parseHomeAssistant(body []byte) (WallReading, error) {
	var st struct {
		Entity string `json:"entity_id"`
		State  string `json:"state"`
		Attrs  struct {
			Unit string `json:"unit_of_measurement"`
		} `json:"attributes"`
		// last_reported moves with every report of the sensor, an
		// unchanged value too (Home Assistant 2024.3 on); last_updated
		// only when the value or its attributes change.
		Reported string `json:"last_reported"`
		Updated  string `json:"last_updated"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return WallReading{}, fmt.Errorf("the Home Assistant's answer is not a sensor's state: %w", err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(st.State), 64)
	if err != nil {
		return WallReading{}, fmt.Errorf("%w: %s is %q", ErrNoWallPower, st.Entity, st.State)
	}
	switch strings.TrimSpace(st.Attrs.Unit) {
	case "W":
	case "kW":
		v *= 1000
	case "mW":
		v /= 1000
	default:
		return WallReading{}, fmt.Errorf("%s is in %q, not a power (W or kW): choose the plug's power sensor", st.Entity, st.Attrs.Unit)
	}
	stamp := st.Reported
	if stamp == "" {
		stamp = st.Updated
	}
	return checked(WallReading{PowerW: v, Where: st.Entity, Updated: stamp})
}

// checked refuses a reading no plug on a homelab's lead can give.
func checked(r WallReading) (WallReading, error) {
	if math.IsNaN(r.PowerW) || r.PowerW < 0 || r.PowerW > maxWallW {
		return WallReading{}, fmt.Errorf("the plug said %g W, which no plug on one power lead reads", r.PowerW)
	}
	return r, nil
}

// maxWallW bounds a believable reading: a 16 A lead at 240 V is 3.8 kW.
const maxWallW = 4000

// Wall is a plug to read: its address and family, and for Home
// Assistant the entity and its token (from the keyring, never saved
// here).
type Wall struct {
	Family WallFamily
	base   *url.URL
	entity string
	token  string
	client *http.Client
}

// wallTimeout bounds one reading: a plug on Wi-Fi answers in well under
// a second, or is not there.
const wallTimeout = 3 * time.Second

// maxWallBody bounds a plug's answer (a Gen2 Shelly's whole status is a
// few kB).
const maxWallBody = 256 << 10

// ParseWall reads a wall source: http://host[:port] for a Shelly or a
// Tasmota (its family found by DetectWall), ha://host:8123/sensor.name
// for a Home Assistant sensor (hass:// too; ?tls for https), read with
// token.
func ParseWall(s, token string) (*Wall, error) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the wall plug %q is not an address: write http://plug-address for a Shelly or Tasmota, or ha://home-assistant:8123/sensor.name", s)
	}
	if u.User != nil {
		return nil, errors.New("the wall plug's address must not hold a user or password")
	}
	w := &Wall{client: &http.Client{Timeout: wallTimeout}}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		w.base = &url.URL{Scheme: u.Scheme, Host: u.Host}
	case "ha", "hass":
		entity := strings.Trim(u.Path, "/")
		if !strings.Contains(entity, ".") || strings.Contains(entity, "/") {
			return nil, fmt.Errorf("the Home Assistant sensor %q is not an entity id: write ha://host:8123/sensor.name", entity)
		}
		scheme := "http"
		if u.Query().Has("tls") {
			scheme = "https"
		}
		w.Family, w.entity, w.token = WallHomeAssistant, entity, token
		w.base = &url.URL{Scheme: scheme, Host: u.Host}
	default:
		return nil, fmt.Errorf("the wall plug's scheme %q is not one we read: http:// for a Shelly or Tasmota, ha:// for Home Assistant", u.Scheme)
	}
	return w, nil
}

// Host is where the plug answers, for the UI and local sections.
func (w *Wall) Host() string { return w.base.Host }

// get reads path from the plug, its status with its body.
func (w *Wall) get(ctx context.Context, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, wallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base.String()+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("the wall plug at %s did not answer: %w", w.base.Host, rootErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWallBody+1))
	if err != nil {
		return 0, nil, fmt.Errorf("the wall plug at %s: %w", w.base.Host, err)
	}
	if len(body) > maxWallBody {
		return 0, nil, fmt.Errorf("the wall plug at %s answered more than %d kB: not a plug's status", w.base.Host, maxWallBody>>10)
	}
	return resp.StatusCode, body, nil
}

// rootErr is err without the URL and operation net/http wraps it in.
func rootErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// wallRoutes are what each family is asked, in the order DetectWall
// tries them.
var wallRoutes = []struct {
	family WallFamily
	path   string
	parse  func([]byte) (WallReading, error)
}{
	{WallShellyGen2, "/rpc/Shelly.GetStatus", parseShellyGen2},
	{WallShellyGen1, "/status", parseShellyGen1},
	{WallTasmota, "/cm?cmnd=Status%208", parseTasmota},
}

// DetectWall finds the plug's family from what it answers, and reads it
// once: the first route that answers JSON of its family. A plug that
// answers but reports no power is said so (ErrNoWallPower), not tried as
// another family.
func (w *Wall) DetectWall(ctx context.Context) (WallReading, error) {
	if w.Family != "" {
		return w.Read(ctx)
	}
	var tried []string
	for _, r := range wallRoutes {
		status, body, err := w.get(ctx, r.path)
		if err != nil {
			return WallReading{}, err // the address does not answer: no route will
		}
		if status != http.StatusOK || !looksLike(r.family, body) {
			tried = append(tried, fmt.Sprintf("%s (%s: HTTP %d)", r.family.Name(), r.path, status))
			continue
		}
		reading, err := r.parse(body)
		if err != nil {
			return WallReading{}, fmt.Errorf("%s at %s: %w", r.family.Name(), w.base.Host, err)
		}
		w.Family = r.family
		return reading, nil
	}
	return WallReading{}, fmt.Errorf("the device at %s is not a plug we read: asked as %s", w.base.Host, strings.Join(tried, ", "))
}

// looksLike says whether body is the family's JSON (a web page or
// another device's status is not).
func looksLike(f WallFamily, body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	switch f {
	case WallShellyGen2:
		_, sys := top["sys"]
		_, sw := top["switch:0"]
		_, pm := top["pm1:0"]
		_, em := top["em:0"]
		return sys || sw || pm || em
	case WallShellyGen1:
		_, meters := top["meters"]
		_, relays := top["relays"]
		return meters || relays
	case WallTasmota:
		_, sns := top["StatusSNS"]
		return sns
	}
	return false
}

// Read reads the plug once, its family known (DetectWall first).
func (w *Wall) Read(ctx context.Context) (WallReading, error) {
	if w.Family == WallHomeAssistant {
		if w.token == "" {
			return WallReading{}, errors.New("a Home Assistant sensor is read with a long-lived access token (your profile in Home Assistant): give it beside the endpoint's Wall power field in the app, or in $KOVARA_WALL_TOKEN to kovara-bench")
		}
		status, body, err := w.get(ctx, "/api/states/"+w.entity)
		switch {
		case err != nil:
			return WallReading{}, err
		case status == http.StatusUnauthorized:
			return WallReading{}, fmt.Errorf("the Home Assistant at %s refused the token (HTTP 401): make a long-lived access token under your profile and give it to the endpoint", w.base.Host)
		case status == http.StatusNotFound:
			return WallReading{}, fmt.Errorf("the Home Assistant at %s has no entity %s", w.base.Host, w.entity)
		case status != http.StatusOK:
			return WallReading{}, fmt.Errorf("the Home Assistant at %s answered HTTP %d", w.base.Host, status)
		}
		return parseHomeAssistant(body)
	}
	for _, r := range wallRoutes {
		if r.family != w.Family {
			continue
		}
		status, body, err := w.get(ctx, r.path)
		if err != nil {
			return WallReading{}, err
		}
		if status != http.StatusOK {
			return WallReading{}, fmt.Errorf("%s at %s answered HTTP %d", w.Family.Name(), w.base.Host, status)
		}
		return r.parse(body)
	}
	return WallReading{}, errors.New("the wall plug's family is not known yet: detect it first")
}

// String says the plug and its reading as the Test does: "Shelly (Gen2
// or later) at 192.168.1.40: 84.2 W now (switch:0)".
func (r WallReading) String(f WallFamily, host string) string {
	return fmt.Sprintf("%s at %s: %.1f W now (%s)", f.Name(), host, r.PowerW, r.Where)
}
