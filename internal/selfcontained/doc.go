// Package selfcontained holds one test: that the repository explains
// itself, i.e. that no tracked file points a reader to notes that live
// outside it. The design and the algorithms are documented in docs/
// (docs/design.md, docs/algorithms/); code comments cite the papers'
// sections and those pages. The package has no code.
package selfcontained
