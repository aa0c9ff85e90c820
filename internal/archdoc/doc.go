// Package archdoc keeps docs/architecture.md's tables true to the code: who
// owns what (each package's own doc comment, grouped by the pipeline stage
// its folder belongs to) and the subjects of the facts (facts.Kinds(), and
// the packages that name each kind). Its test rewrites them with -update,
// as rules' TestRulesDocTable does for the alert table.
package archdoc
