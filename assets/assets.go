// Package assets holds the files the app embeds: its icon, and an example
// kovara.yaml manifest (documented in docs/manifest.md).
package assets

import _ "embed"

// Icon is the app icon, 512×512 PNG.
//
//go:embed icon.png
var Icon []byte

// ExampleManifest is assets/kovara.example.yaml.
//
//go:embed kovara.example.yaml
var ExampleManifest []byte
