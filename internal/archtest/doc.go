// Package archtest holds the test that docs/architecture.md's import
// rules are the code's: its "imports" block names, for every package of
// the module, the module's packages it imports.
package archtest
