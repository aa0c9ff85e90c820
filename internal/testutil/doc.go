// Package testutil holds helpers for zwatch's tests only: import it from
// _test.go files, never from the program itself.
//
// It imports nothing of zwatch, so that the tests of any package, internal
// ones included, can use it without an import cycle; what a helper decodes
// is a type parameter (see Phone).
package testutil
