package engine

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/shellwords"
)

// Where a setting's server listens (docs/plans.md, "Compare settings"):
// read from its command where the server's family makes it plain, so a
// command with its own --port is waited for and measured there, not at
// the endpoint's address. One rule, here, for the comparison's runs, the
// app's Test and plan line and the CLI.

// TuneListen is where a setting's server listens, as its command says.
type TuneListen struct {
	Setting string
	// Known: the setting starts a server of a family whose words make its
	// address plain (llama-server, vLLM, SGLang, Ollama). Otherwise its
	// runs go to the endpoint's address and nothing is said.
	Known bool
	// Addr is the host:port the app reaches the server at, and Why how the
	// command says so ("its --port", "llama-server's default").
	Addr, Why string
	// Endpoint is the endpoint's host:port ("" when there is none yet).
	Endpoint string
	// URL is where the setting's server is waited for and its runs go: the
	// endpoint's address, with the command's host and port where the two
	// differ.
	URL string
}

// Differs says the command listens elsewhere than the endpoint's address.
func (l TuneListen) Differs() bool {
	if !l.Known || l.Endpoint == "" {
		return false
	}
	h1, p1, _ := net.SplitHostPort(l.Addr)
	h2, p2, _ := net.SplitHostPort(l.Endpoint)
	return p1 != p2 || !sameHost(h1, h2)
}

// Where is where the setting's server listens, in words: "setting np8
// listens on 127.0.0.1:8090 (its --port)"; "" when its command does not
// say.
func (l TuneListen) Where() string {
	if !l.Known {
		return ""
	}
	return fmt.Sprintf("setting %s listens on %s (%s)", l.Setting, l.Addr, l.Why)
}

// Disagreement is the one sentence said before anything starts when the
// command listens elsewhere than the endpoint: "The endpoint is
// 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its
// --port): the runs go to 8090." "" when they agree or the command does
// not say.
func (l TuneListen) Disagreement() string {
	if !l.Differs() {
		return ""
	}
	return fmt.Sprintf("The endpoint is %s but setting %s's command listens on %s (%s): the runs go to %s.", l.Endpoint, l.Setting, l.Addr, l.Why, l.goesTo())
}

// goesTo is where the runs go when the command listens elsewhere than
// the endpoint: its port on the endpoint's host, else its host and port.
func (l TuneListen) goesTo() string {
	h1, p1, _ := net.SplitHostPort(l.Addr)
	if h2, _, _ := net.SplitHostPort(l.Endpoint); sameHost(h1, h2) {
		return p1
	}
	return l.Addr
}

// Line is what the CLI says of a setting before the first round: its
// disagreement with the endpoint, else where it listens ("" when its
// command does not say).
func (l TuneListen) Line() string {
	if s := l.Disagreement(); s != "" {
		return s
	}
	if w := l.Where(); w != "" {
		return strings.ToUpper(w[:1]) + w[1:] + "."
	}
	return ""
}

// TuneListens is where each setting's server listens, in the plan's order.
func TuneListens(settings []setup.TuneSetting, endpointURL string) []TuneListen {
	out := make([]TuneListen, len(settings))
	for i, s := range settings {
		out[i] = ListenOf(s, endpointURL)
	}
	return out
}

// ListenOf is where setting s's server listens, given the endpoint's
// address (endpointURL, "" when none is chosen yet). The command says it
// for llama-server (--host, --port, its LLAMA_ARG_HOST and LLAMA_ARG_PORT;
// 127.0.0.1:8080 by default), vllm serve and python -m
// vllm.entrypoints.openai.api_server (--host, --port; every address, port
// 8000), python -m sglang.launch_server (--host, --port;
// 127.0.0.1:30000) and ollama serve (OLLAMA_HOST; 127.0.0.1:11434), with
// NAME=VALUE words or env before the program. A server listening on
// every address is reached at 127.0.0.1. Through ssh the server is on the
// ssh host: the port is the command's, the host the endpoint's (how this
// machine reaches that host, which an alias of ~/.ssh/config would not
// say), or the ssh host's own name when the endpoint is this machine and
// names another port (one of this machine's ports stays the endpoint's:
// a tunnel's). Any other command keeps the endpoint's address.
func ListenOf(s setup.TuneSetting, endpointURL string) TuneListen {
	l := TuneListen{Setting: s.Name, URL: endpointURL}
	var base setup.Base
	if endpointURL != "" {
		b, err := setup.ParseBase(endpointURL)
		if err != nil {
			return l // the endpoint's own error says it
		}
		base, l.Endpoint = b, b.HostPort()
	}
	if s.How != setup.ByCommand {
		return l
	}
	said, ok := commandListen(s)
	if !ok {
		return l
	}
	host := said.host
	if said.remote != "" {
		eh, ep, _ := net.SplitHostPort(l.Endpoint)
		switch {
		case l.Endpoint != "" && !isLoopback(eh):
			host = eh
		case l.Endpoint != "" && ep == said.port:
			host = eh
		default:
			host = said.remote
		}
	}
	l.Known, l.Addr, l.Why = true, net.JoinHostPort(host, said.port), said.why
	switch {
	case l.Endpoint == "":
		l.URL = "http://" + l.Addr
	case l.Differs():
		u, _ := url.Parse(base.Root)
		u.Host = l.Addr
		l.URL = u.String()
	}
	return l
}

// listenSaid is what a command says of its address.
type listenSaid struct {
	host, port string
	why        string
	remote     string // the ssh host it runs on; "" on this machine
}

// commandListen reads a setting's command: its environment, ssh, the
// program and its flags.
func commandListen(s setup.TuneSetting) (listenSaid, bool) {
	words, err := shellwords.Split(s.Command)
	if err != nil {
		return listenSaid{}, false
	}
	env := append([]string(nil), s.Env...)
	remote := sshHost(s.SSH)
	words, env = program(words, env)
	if len(words) > 0 && s.SSH == "" && filepath.Base(words[0]) == "ssh" {
		dest, rest, ok := sshCommand(words[1:])
		if !ok {
			return listenSaid{}, false
		}
		// The remote shell splits the words ssh joins with blanks again.
		if words, err = shellwords.Split(strings.Join(rest, " ")); err != nil {
			return listenSaid{}, false
		}
		remote, env = sshHost(dest), nil // this side's environment is ssh's own
		words, env = program(words, env)
	}
	if len(words) == 0 {
		return listenSaid{}, false
	}
	said, ok := familyListen(words, env)
	if !ok {
		return listenSaid{}, false
	}
	if remote != "" {
		said.remote, said.why = remote, said.why+", through ssh"
	}
	return said, true
}

// program takes the NAME=VALUE words and an env before the program into
// env.
func program(words, env []string) ([]string, []string) {
	if len(words) > 0 && filepath.Base(words[0]) == "env" {
		words = words[1:]
	}
	for len(words) > 0 && isAssignment(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	return words, env
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssignment(w string) bool { return assignment.MatchString(w) }

// sshValued are ssh's options that take a value (ssh(1)).
const sshValued = "BbcDEeFIiJLlmOoPpQRSWw"

// sshCommand reads ssh's own words: its destination and the remote
// command's words. A local forward (-L) is refused: where the server is
// reached from here is then the forward's, the person's own arrangement.
func sshCommand(args []string) (dest string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			i++
			if i >= len(args) {
				return "", nil, false
			}
			return args[i], args[i+1:], len(args) > i+1
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return w, args[i+1:], len(args) > i+1
		}
		for j := 1; j < len(w); j++ {
			if !strings.ContainsRune(sshValued, rune(w[j])) {
				continue
			}
			if w[j] == 'L' {
				return "", nil, false
			}
			if j == len(w)-1 {
				i++ // the value is the next word
			}
			break
		}
	}
	return "", nil, false
}

// sshHost is the host of an ssh destination: "user@host", "host" or
// "ssh://user@host:port".
func sshHost(dest string) string {
	if dest == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(dest, "ssh://"); ok {
		if u, err := url.Parse("ssh://" + rest); err == nil {
			return u.Hostname()
		}
	}
	if i := strings.LastIndexByte(dest, '@'); i >= 0 {
		dest = dest[i+1:]
	}
	return strings.Trim(dest, "[]")
}

// listenFamily is one server family whose command says where it listens.
type listenFamily struct {
	name string
	// args are the words after the program (and its subcommand or
	// module), ok when the words start this family's server.
	args func(words []string) ([]string, bool)
	// hostFlag and portFlag give the address; hostEnv and portEnv too,
	// where the flags do not (llama.cpp's LLAMA_ARG_…).
	hostFlag, portFlag, hostEnv, portEnv string
	// hostPortEnv gives both at once (Ollama's OLLAMA_HOST).
	hostPortEnv string
	// defHost ("" for every address) and defPort are the defaults.
	defHost, defPort string
}

// listenFamilies are the servers whose address a command makes plain
// (their own documentation: llama.cpp's common/arg.cpp, vLLM's and
// SGLang's server arguments, Ollama's envconfig).
var listenFamilies = []listenFamily{
	{name: "llama-server", args: programNamed("llama-server"), hostFlag: "--host", portFlag: "--port", hostEnv: "LLAMA_ARG_HOST", portEnv: "LLAMA_ARG_PORT", defHost: "127.0.0.1", defPort: "8080"},
	{name: "vLLM", args: subcommand("vllm", "serve"), hostFlag: "--host", portFlag: "--port", defPort: "8000"},
	{name: "vLLM", args: pythonModule("vllm.entrypoints.openai.api_server"), hostFlag: "--host", portFlag: "--port", defPort: "8000"},
	{name: "SGLang", args: pythonModule("sglang.launch_server"), hostFlag: "--host", portFlag: "--port", defHost: "127.0.0.1", defPort: "30000"},
	{name: "Ollama", args: subcommand("ollama", "serve"), hostPortEnv: "OLLAMA_HOST", defHost: "127.0.0.1", defPort: "11434"},
}

// programName is a command's program without its directory or .exe.
func programName(w string) string {
	return strings.TrimSuffix(filepath.Base(w), ".exe")
}

func programNamed(name string) func([]string) ([]string, bool) {
	return func(words []string) ([]string, bool) {
		return words[1:], programName(words[0]) == name
	}
}

func subcommand(name, sub string) func([]string) ([]string, bool) {
	return func(words []string) ([]string, bool) {
		if programName(words[0]) != name || len(words) < 2 || words[1] != sub {
			return nil, false
		}
		return words[2:], true
	}
}

var python = regexp.MustCompile(`^python[0-9.]*$`)

func pythonModule(module string) func([]string) ([]string, bool) {
	return func(words []string) ([]string, bool) {
		if !python.MatchString(programName(words[0])) {
			return nil, false
		}
		for i := 1; i+1 < len(words); i++ {
			if words[i] == "-m" {
				return words[i+2:], words[i+1] == module
			}
		}
		return nil, false
	}
}

// familyListen is where the server of words listens, with env its
// environment; not ok for a family not known here, or an address that is
// no TCP port (a unix socket, port 0).
func familyListen(words, env []string) (listenSaid, bool) {
	for _, f := range listenFamilies {
		args, ok := f.args(words)
		if !ok {
			continue
		}
		host, hostBy := lastFlag(args, f.hostFlag)
		port, portBy := lastFlag(args, f.portFlag)
		if hostBy == "" {
			if host, hostBy = envValue(env, f.hostEnv); hostBy != "" {
				hostBy += "=" + host
			}
		}
		if portBy == "" {
			port, portBy = envValue(env, f.portEnv)
		}
		if v, by := envValue(env, f.hostPortEnv); by != "" {
			var withPort bool
			host, port, withPort = ollamaHost(v, f.defPort)
			hostBy, portBy = by, by
			if !withPort {
				hostBy, portBy = by+"="+v, ""
			}
		}
		if hostBy == "" {
			host = f.defHost
		}
		if portBy == "" {
			port = f.defPort
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.HasSuffix(host, ".sock") {
			return listenSaid{}, false
		}
		host = strings.Trim(host, "[]")
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1" // every address: this machine's own
		}
		return listenSaid{host: host, port: port, why: listenWhy(f.name, hostBy, portBy)}, true
	}
	return listenSaid{}, false
}

// listenWhy says how the command gave its address: "its --port", "its
// --host 0.0.0.0 and --port", "its OLLAMA_HOST", "llama-server's
// default", "its --host 0.0.0.0, and llama-server's default port".
func listenWhy(family, hostBy, portBy string) string {
	switch {
	case hostBy == "" && portBy == "":
		return family + "'s default"
	case hostBy == portBy, hostBy == "":
		return "its " + portBy
	case portBy == "":
		return "its " + hostBy + ", and " + family + "'s default port"
	}
	return "its " + hostBy + " and " + portBy
}

// lastFlag is the value the last of flag's words gives ("--port 8090",
// "--port=8090": the last one given wins, as in the servers' own
// parsers), and how it was given ("--port", "--host 0.0.0.0"); "" when
// none does.
func lastFlag(args []string, flag string) (value, by string) {
	if flag == "" {
		return "", ""
	}
	for i, w := range args {
		if w == flag && i+1 < len(args) {
			value, by = args[i+1], flag
		} else if v, ok := strings.CutPrefix(w, flag+"="); ok {
			value, by = v, flag
		}
	}
	if by != "" && flag == "--host" {
		by += " " + value
	}
	return value, by
}

// envValue is name's value in env (the last one wins, as a shell's), and
// name when it is set.
func envValue(env []string, name string) (value, by string) {
	if name == "" {
		return "", ""
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			value, by = v, name
		}
	}
	return value, by
}

// ollamaHost reads OLLAMA_HOST as Ollama does (envconfig):
// [scheme://]host[:port], the port 80 or 443 after an http:// or https://
// without one, else defPort; a port that is no number is defPort too.
// withPort says v gave the port.
func ollamaHost(v, defPort string) (host, port string, withPort bool) {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), `"'`))
	scheme, hostport, ok := strings.Cut(v, "://")
	switch {
	case !ok:
		hostport = v
	case scheme == "http":
		defPort = "80"
	case scheme == "https":
		defPort = "443"
	}
	hostport = strings.TrimRight(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	withPort = err == nil || ok
	if err != nil {
		host, port = "127.0.0.1", defPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		port, withPort = defPort, false
	}
	return host, port, withPort
}

// sameHost: two hosts are the same server's when they are equal, or both
// this machine's loopback.
func sameHost(a, b string) bool {
	return strings.EqualFold(a, b) || isLoopback(a) && isLoopback(b)
}

func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// TuneServersNote is what the plan's line says of the servers the app
// starts (the app's Compare settings form): for whom, that nothing else
// may answer where each listens, and, setting by setting, where it
// listens or, where that is not the endpoint's address, the one sentence
// that says so. "" when no setting starts a server.
func TuneServersNote(settings []setup.TuneSetting, endpointURL string) string {
	var started, atEndpoint, lines []string
	// Settings whose commands listen at one address, said so the same
	// way, are said in one sentence: two lines that differ only in -np
	// had the same sentence twice.
	var groups [][]TuneListen
	for i, l := range TuneListens(settings, endpointURL) {
		if settings[i].How != setup.ByCommand {
			continue
		}
		started = append(started, l.Setting)
		if l.Line() == "" {
			atEndpoint = append(atEndpoint, l.Setting)
			continue
		}
		j := slices.IndexFunc(groups, func(g []TuneListen) bool { return g[0].Addr == l.Addr && g[0].Why == l.Why })
		if j < 0 {
			groups = append(groups, []TuneListen{l})
		} else {
			groups[j] = append(groups[j], l)
		}
	}
	for _, g := range groups {
		lines = append(lines, listenLine(g))
	}
	if len(started) == 0 {
		return ""
	}
	if len(lines) == 0 {
		return fmt.Sprintf("The app starts and stops the server for %s at this endpoint's address; nothing else may answer there when it starts.", results.JoinAnd(started))
	}
	out := fmt.Sprintf("The app starts and stops the server for %s; nothing else may answer where it listens when it starts. %s", results.JoinAnd(started), strings.Join(lines, " "))
	if len(atEndpoint) > 0 {
		out += fmt.Sprintf(" %s %s at this endpoint's address.", results.JoinAnd(atEndpoint), results.Plural(len(atEndpoint), "listens", "listen"))
	}
	return out
}

// listenLine is TuneListen.Line of settings whose commands listen at one
// address, said the same way: "The endpoint is 127.0.0.1:8080 but
// settings A and B listen on 127.0.0.1:8090 (their --port): the runs go
// to 8090."
func listenLine(g []TuneListen) string {
	if len(g) == 1 {
		return g[0].Line()
	}
	names := make([]string, len(g))
	for i, l := range g {
		names[i] = l.Setting
	}
	l := g[0]
	why := l.Why
	if rest, ok := strings.CutPrefix(why, "its "); ok {
		why = "their " + rest
	}
	if !l.Differs() {
		return fmt.Sprintf("Settings %s listen on %s (%s).", results.JoinAnd(names), l.Addr, why)
	}
	return fmt.Sprintf("The endpoint is %s but settings %s listen on %s (%s): the runs go to %s.", l.Endpoint, results.JoinAnd(names), l.Addr, why, l.goesTo())
}
