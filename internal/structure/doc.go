// Package structure holds the tests that keep capstan's shape as
// ARCHITECTURE.md draws it: packages import only downwards, layer by
// layer, and functions and structs stay small. It has no code of its own;
// the rules are tables in its tests, which CI runs with every other test.
package structure
