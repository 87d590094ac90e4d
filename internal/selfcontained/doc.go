// Package selfcontained holds tests that the repository explains itself:
// no tracked file points a reader to notes that live outside it, and every
// registered learner has its page in docs/algorithms. The design and the algorithms are documented in docs/
// (docs/design.md, docs/algorithms/); code comments cite the papers'
// sections and those pages. The package has no code.
package selfcontained
