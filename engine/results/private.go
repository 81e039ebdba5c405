package results

import "slices"

// Which keys of a document's local section are private, said once for
// every document kind. Export never writes local at all (PublishCheck);
// a report (package report) keeps the local figures its tables are
// computed from and blanks the text of every key here. The privacy tests
// (report, the CLI, the app) plant a value in each of these keys of every
// kind and look for it in every output, and fail on any text of local,
// found from the Go types, that is neither here nor in their short list
// of texts allowed out.

// A PrivateKey is one key of a document's local section whose text never
// leaves this machine.
type PrivateKey struct {
	// Path is the key from the document's top: JSON keys joined by ".",
	// "[]" after a key whose value is a list, for each of its elements
	// ("local.levels[].messages"). Every text beneath the key is private.
	Path string
	// Drop: the key is left out of what leaves altogether, not only
	// blanked — what it holds is not text but says the text anyway.
	Drop bool
}

// privateKeys, in the order a report blanks them (the order it collects
// the private texts it then keeps out of every line).
var privateKeys = []PrivateKey{
	// The endpoint's address, host and the name it was saved under.
	{Path: "local.endpoint"},
	{Path: "local.endpoint_host"},
	{Path: "local.endpoint_name"},
	// The models the server listed: a person's own fine-tunes by name.
	{Path: "local.served_models"},
	// The engine's own sentences: they may quote the server.
	{Path: "local.warnings"},
	// The manifest's path and name, on the person's disk.
	{Path: "local.manifest"},
	// Why the server went: a connection error quoting its address.
	{Path: "local.server_gone"},
	// A settings comparison's commands (paths, environments, ssh
	// targets, instructions), its servers' logs and its answers' words.
	{Path: "local.commands"},
	{Path: "local.logs"},
	{Path: "local.answers"},
	// A shard's and a merged file's machines: their hosts and names.
	{Path: "local.shard"},
	{Path: "local.merged"},
	// The path of a prompts file and of a replayed trace (their hashes
	// and counts, outside local, stay).
	{Path: "local.prompts_file"},
	{Path: "local.trace_file"},
	// An answers comparison's other endpoint, as the first.
	{Path: "local.other_endpoint"},
	{Path: "local.other_endpoint_host"},
	{Path: "local.other_endpoint_name"},
	// An answers comparison's reference answers: token ids, which the
	// model's tokenizer turns back into the answers' words.
	{Path: "local.reference", Drop: true},
	// The server's error messages by class (the counts by class stay).
	{Path: "local.levels[].messages"},
	// The GPU source's host and what it said went wrong.
	{Path: "local.telemetry.host"},
	{Path: "local.telemetry.warnings"},
	// The other programs on the cards are the person's own: their names
	// never leave (a finding then counts them).
	{Path: "local.telemetry.gpu_processes.start[].name"},
	{Path: "local.telemetry.gpu_processes.end[].name"},
	// The wall plug's address and what it said, as the GPU source's.
	{Path: "local.wall.host"},
	{Path: "local.wall.warnings"},
}

// PrivateKeys are the private keys of local, for every document kind
// (a kind's document has those its type holds). The slice is the
// caller's own.
func PrivateKeys() []PrivateKey { return slices.Clone(privateKeys) }
