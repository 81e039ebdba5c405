package hw

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func captured(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "captured", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWallParsesCapturedPlugs: each plug family's real answers
// (testdata/captured, SOURCES.md says where each came from) read as the
// power the plug said, in watts; one without a power figure is no
// reading, never 0 W.
func TestWallParsesCapturedPlugs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		parse func([]byte) (WallReading, error)
		want  float64
		where string
		none  bool
	}{
		{"shelly_gen2_plus1pm_shelly_getstatus_telekatz1.json", parseShellyGen2, 28.2, "switch:0", false},
		{"shelly_gen3_1pm_mini_switch_status_mqtt_iobroker1592.json", parseShellyGen2, 0, "switch", false},
		{"shelly_gen2_plus2pm_switch_getstatus_unmetered_crestron36.json", parseShellyGen2, 0, "", true},
		{"shelly_gen1_plug_s_status_v1.5.6_openhab.json", parseShellyGen1, 0, "meters[0]", false},
		{"tasmota_status8_single_phase_tasmota10232.json", parseTasmota, 1, "ENERGY", false},
		{"tasmota_status8_three_phase_arrays_evcc18879.json", parseTasmota, 1, "ENERGY (3 channels)", false},
		{"tasmota_status8_no_energy_sensor_tasmota3340.json", parseTasmota, 0, "", true},
	}
	for _, tc := range tests {
		got, err := tc.parse(captured(t, tc.file))
		switch {
		case tc.none:
			if !errors.Is(err, ErrNoWallPower) {
				t.Errorf("%s: %+v, %v; want no power reading", tc.file, got, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.file, err)
		case got.PowerW != tc.want || got.Where != tc.where:
			t.Errorf("%s: %.1f W at %q, want %.1f W at %q", tc.file, got.PowerW, got.Where, tc.want, tc.where)
		}
	}
	// A Shelly's error for a component it lacks is said, with its words.
	if _, err := parseShellyGen2(captured(t, "shelly_gen2_error_404_no_handler_crestron36.json")); err == nil || !strings.Contains(err.Error(), "No handler for EM.GetStatus") {
		t.Errorf("Shelly's error body: %v", err)
	}
}

// TestHomeAssistantUnits: a Home Assistant sensor's state is read in its
// own unit. The states here are made for the test (no real power
// sensor's answer was found to capture: SOURCES.md); their shape is the
// REST API's documented one.
func TestHomeAssistantUnits(t *testing.T) {
	t.Parallel()
	state := func(v, unit string) []byte {
		return []byte(`{"entity_id":"sensor.rack_power","state":"` + v + `","attributes":{"unit_of_measurement":"` + unit + `","device_class":"power"}}`)
	}
	tests := []struct {
		body []byte
		want float64
		fail string
	}{
		{state("84.2", "W"), 84.2, ""},
		{state("0.352", "kW"), 352, ""},
		{state("unavailable", "W"), 0, "is \"unavailable\""},
		{state("12.5", "kWh"), 0, "not a power"},
	}
	for _, tc := range tests {
		got, err := parseHomeAssistant(tc.body)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: %v, want %q", tc.body, err, tc.fail)
			}
			continue
		}
		if err != nil || got.PowerW != tc.want {
			t.Errorf("%s: %v W, %v; want %v W", tc.body, got.PowerW, err, tc.want)
		}
	}
}

// standIn answers as a plug does: each path's status and body.
func standIn(t *testing.T, routes map[string]func(w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := routes[r.URL.RequestURI()]; ok {
			f(w)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func answer(status int, body []byte) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.WriteHeader(status)
		w.Write(body)
	}
}

// TestDetectWall: the family is found from what the plug answers — a
// Shelly Gen2 on its RPC route, a Gen1 and a Tasmota where that route is
// not found — and then read on its own route; a web page or another
// device is not taken for a plug; an address that does not answer is
// said; Home Assistant refuses a bad token with its own words.
func TestDetectWall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gen2 := captured(t, "shelly_gen2_plus1pm_shelly_getstatus_telekatz1.json")
	tests := []struct {
		name   string
		routes map[string]func(w http.ResponseWriter)
		family WallFamily
		want   float64
		fail   string
	}{
		{"Shelly Gen2", map[string]func(w http.ResponseWriter){"/rpc/Shelly.GetStatus": answer(200, gen2)}, WallShellyGen2, 28.2, ""},
		{"Shelly Gen1", map[string]func(w http.ResponseWriter){"/status": answer(200, captured(t, "shelly_gen1_plug_s_status_v1.5.6_openhab.json"))}, WallShellyGen1, 0, ""},
		{"Tasmota", map[string]func(w http.ResponseWriter){"/cm?cmnd=Status%208": answer(200, captured(t, "tasmota_status8_single_phase_tasmota10232.json"))}, WallTasmota, 1, ""},
		{"Tasmota without its meter", map[string]func(w http.ResponseWriter){"/cm?cmnd=Status%208": answer(200, captured(t, "tasmota_status8_no_energy_sensor_tasmota3340.json"))}, "", 0, "reports no power"},
		{"a web page", map[string]func(w http.ResponseWriter){"/status": answer(200, []byte("<html><body>router</body></html>"))}, "", 0, "not a plug we read"},
	}
	for _, tc := range tests {
		w, err := ParseWall(standIn(t, tc.routes), "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.DetectWall(ctx)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: %+v, %v; want %q", tc.name, got, err, tc.fail)
			}
			continue
		}
		if err != nil || w.Family != tc.family || got.PowerW != tc.want {
			t.Errorf("%s: %s %+v, %v; want %s %.1f W", tc.name, w.Family, got, err, tc.family, tc.want)
			continue
		}
		if again, err := w.Read(ctx); err != nil || again.PowerW != tc.want {
			t.Errorf("%s: read again %+v, %v", tc.name, again, err)
		}
	}

	// Nothing listening.
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	w, _ := ParseWall(addr, "")
	if _, err := w.DetectWall(ctx); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("no plug there: %v", err)
	}

	// Home Assistant refusing the token, with its real body.
	ha := standIn(t, map[string]func(w http.ResponseWriter){"/api/states/sensor.rack_power": answer(401, captured(t, "homeassistant_401_unauthorized_body_core15822.txt"))})
	w, err := ParseWall(strings.Replace(ha, "http://", "ha://", 1)+"/sensor.rack_power", "wrong-token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.DetectWall(ctx); err == nil || !strings.Contains(err.Error(), "refused the token") || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("a refused token: %v", err)
	}
}

// TestParseWall: the forms a wall source is written in, and the ones
// refused with how to write it.
func TestParseWall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, host string
		family   WallFamily
		fail     string
	}{
		{"http://192.168.1.40", "192.168.1.40", "", ""},
		{"ha://hass.lan:8123/sensor.rack_power", "hass.lan:8123", WallHomeAssistant, ""},
		{"ha://hass.lan:8123/", "", "", "not an entity id"},
		{"http://admin:secret@plug", "", "", "must not hold a user or password"},
		{"mqtt://broker/plug", "", "", "not one we read"},
		{"plug.lan", "", "", "not an address"},
	}
	for _, tc := range tests {
		w, err := ParseWall(tc.in, "")
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.fail)
			}
			continue
		}
		if err != nil || w.Host() != tc.host || w.Family != tc.family {
			t.Errorf("%q: %+v, %v", tc.in, w, err)
		}
	}
}
