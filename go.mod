module github.com/kovara/desktop

go 1.26.8

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/term v0.48.0
	golang.org/x/text v0.43.0
)

require golang.org/x/sys v0.50.0 // indirect
