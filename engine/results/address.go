package results

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// What counts as "URL-like" in a published run record.
//
// A string is refused when any of these occurs anywhere in it:
//
//   - a URL scheme: a letter, then letters, digits, '+', '-' or '.', then
//     "://" ("http://", "hf://", "file:///").
//   - an IPv6 literal: a word (split at anything other than letters,
//     digits, ':', '.', '%', '_' and '-', so brackets and slashes separate)
//     that, or whose tail after one of its colons, parses as an IPv6 address
//     with net/netip: "::1", "fe80::1%eth0", "[2001:db8::7]:8000",
//     "::ffff:10.0.0.2". "12:30:45" and "model::v2" do not parse.
//   - an IPv4 literal: four dot-separated groups of 1–3 digits, each at most
//     255, not glued to a letter or digit on either side and not part of a
//     longer dotted number ("10.0.0.2", "10.0.0.2:8000"; not "1.2.3.4.5" and
//     not "v1.2.3.4"). A field whose name ends in "version" (or "python")
//     and whose whole value is a dotted number is a version, not an address,
//     so "10.3.0.26" is fine there.
//   - host and port: a name that contains a letter, made of letters,
//     digits, '.', '_' and '-', then ':' and 1–5 digits up to 65535 that end
//     the string or are followed by something other than a letter, digit,
//     '_', ':' or a '.' that continues the token ("gpubox:8000",
//     "gpu.lan:8000/v1"). So "llama3:8b", "qwen2.5:0.5b",
//     "Llama-3.1-8B-Instruct:Q4_K_M", "model:latest" are model tags, and
//     "12:30", "2026-10-29T12:30" and "2026-10-29T12:30:00Z" are times (no
//     letter in the name, the name is a date and hour, or more colons
//     follow). A name followed by digits alone ("model:8") does count.
//   - "localhost" as a word.
//   - any endpoint host name given to the check, as a word, ignoring case.
//     (PublishCheck leaves out host names that say nothing private: an
//     inference server's name such as "vllm", or a word of the run's own
//     model id or engine; see privateHosts.)
//
// Words are delimited by anything that is not an ASCII letter or digit, so
// host "gpubox" is found in "gpubox-fast" and "GPUBOX.lan" but not in
// "gpubox2". Ordinary values — "Qwen/Qwen3-8B", "0.11.0", "v1.2.3",
// "b4567", "fp8", "bf16", "H100 SXM" — match none of the rules.

// addressIn reports the first address-like fragment of s: what kind it is
// and the fragment itself. versionField says s is the value of a field
// holding a version number. hosts must be normalised with normalizeHost.
func addressIn(s string, hosts []string, versionField bool) (what, match string, found bool) {
	if m, ok := findScheme(s); ok {
		return "a URL", m, true
	}
	if m, ok := findIPv6(s); ok {
		return "an IPv6 address", m, true
	}
	if !(versionField && isDottedNumber(s)) {
		if m, ok := findIPv4(s); ok {
			return "an IPv4 address", m, true
		}
	}
	if m, ok := findHostPort(s); ok {
		return "a host and port", m, true
	}
	lower := strings.ToLower(s)
	if m, ok := findWord(s, lower, "localhost"); ok {
		return "a local host name", m, true
	}
	for _, h := range hosts {
		if m, ok := findWord(s, lower, h); ok {
			return "the endpoint's host name", m, true
		}
	}
	return "", "", false
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }

func findScheme(s string) (string, bool) {
	// One pass: letter is the first letter of the current stretch of
	// scheme characters (a scheme starts with a letter), or -1.
	letter := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || c == '+' || c == '-' || c == '.' {
			if letter < 0 && isLetter(c) {
				letter = i
			}
			continue
		}
		if c == ':' && letter >= 0 && strings.HasPrefix(s[i:], "://") {
			end := i + 3
			for end < len(s) && s[end] != ' ' && s[end] != '"' && s[end] != '\'' {
				end++
			}
			return s[letter:end], true
		}
		letter = -1
	}
	return "", false
}

func isIPv6WordByte(c byte) bool {
	return isAlnum(c) || c == ':' || c == '.' || c == '%' || c == '_' || c == '-'
}

func findIPv6(s string) (string, bool) {
	for i := 0; i < len(s); {
		if !isIPv6WordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isIPv6WordByte(s[j]) {
			j++
		}
		word := strings.TrimRight(s[i:j], ".-_")
		i = j
		if strings.IndexByte(word, ':') == strings.LastIndexByte(word, ':') {
			continue // an IPv6 literal has at least two colons
		}
		if isIPv6(word) {
			return word, true
		}
		for k := 0; k < len(word); k++ {
			if word[k] == ':' && isIPv6(word[k+1:]) {
				return word[k+1:], true
			}
		}
	}
	return "", false
}

func isIPv6(s string) bool {
	// The longest IPv6 literal is 45 characters; leave room for a zone.
	if len(s) > 100 {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// isDottedNumber reports a whole value like "10.3.0.26" or "v1.2.3.4".
func isDottedNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}

func findIPv4(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			continue
		}
		if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.') {
			continue
		}
		j, ok := i, true
		for g := 0; g < 4 && ok; g++ {
			if g > 0 {
				if j >= len(s) || s[j] != '.' {
					ok = false
					break
				}
				j++
			}
			start, val := j, 0
			for j < len(s) && isDigit(s[j]) && j-start < 4 {
				val = val*10 + int(s[j]-'0')
				j++
			}
			if j == start || j-start > 3 || val > 255 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if j < len(s) {
			c := s[j]
			if isAlnum(c) || c == '.' && j+1 < len(s) && isDigit(s[j+1]) {
				continue
			}
		}
		return s[i:j], true
	}
	return "", false
}

func isHostByte(c byte) bool { return isAlnum(c) || c == '.' || c == '_' || c == '-' }

func findHostPort(s string) (string, bool) {
	// One pass: run is where the current stretch of host-name characters
	// began, letter the last letter seen in it.
	run, letter := 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isHostByte(c) {
			if isLetter(c) {
				letter = i
			}
			continue
		}
		if c == ':' && letter >= run && !isDateHour(s[run:i]) {
			if end, ok := portAfter(s, i); ok {
				return s[run:end], true
			}
		}
		run, letter = i+1, -1
	}
	return "", false
}

// portAfter reports whether the colon at s[i] starts a port: 1–5 digits,
// at most 65535, not continued by a letter, digit, '_', ':' or a '.' that
// goes on with a letter or digit. It returns the index after the digits.
func portAfter(s string, i int) (int, bool) {
	j, port := i+1, 0
	for j < len(s) && isDigit(s[j]) && j-i <= 6 {
		port = port*10 + int(s[j]-'0')
		j++
	}
	if digits := j - i - 1; digits < 1 || digits > 5 || port > 65535 {
		return 0, false
	}
	if j < len(s) {
		c := s[j]
		if isAlnum(c) || c == '_' || c == ':' {
			return 0, false
		}
		if c == '.' && j+1 < len(s) && isAlnum(s[j+1]) {
			return 0, false
		}
	}
	return j, true
}

// isDateHour reports "2026-10-29T12", the part of an ISO 8601 time that
// comes before the minutes.
func isDateHour(s string) bool {
	if len(s) < 12 || len(s) > 13 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 4 || i == 7:
			if c != '-' {
				return false
			}
		case i == 10:
			if c != 'T' && c != 't' {
				return false
			}
		default:
			if !isDigit(c) {
				return false
			}
		}
	}
	return true
}

// findWord looks for word (lower case) in lower, the lower-cased s, with no
// ASCII letter or digit directly before or after it. It returns the
// occurrence as written in s when the lengths agree.
func findWord(s, lower, word string) (string, bool) {
	if word == "" {
		return "", false
	}
	from := 0
	for {
		i := strings.Index(lower[from:], word)
		if i < 0 {
			return "", false
		}
		i += from
		end := i + len(word)
		if (i == 0 || !isAlnum(lower[i-1])) && (end == len(lower) || !isAlnum(lower[end])) {
			if len(s) == len(lower) {
				return s[i:end], true
			}
			return word, true
		}
		from = i + 1
	}
}

// normalizeHost turns what a caller knows about an endpoint — a host name,
// "host:port", or a whole URL — into the lower-case host name to look for.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return ""
	}
	if strings.Contains(h, "://") {
		if u, err := url.Parse(h); err == nil {
			h = u.Hostname()
		}
	} else if strings.ContainsAny(h, "/") {
		if u, err := url.Parse("http://" + h); err == nil {
			h = u.Hostname()
		}
	} else if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	return strings.ToLower(h)
}

// AddressIn is the publish check's address finder for code outside this
// package (the report package keeps addresses out of what people paste):
// the first address-like fragment of s, hosts being the endpoint's.
func AddressIn(s string, hosts ...string) (what, match string, found bool) {
	var hs []string
	for _, h := range hosts {
		hs = appendHost(hs, h)
	}
	return addressIn(s, hs, false)
}
