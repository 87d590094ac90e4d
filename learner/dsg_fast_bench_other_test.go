//go:build unix && !linux

package learner

import "syscall"

// dsgRusageThread falls back to the whole process where RUSAGE_THREAD is
// not available.
const dsgRusageThread = syscall.RUSAGE_SELF
