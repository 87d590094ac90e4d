package learner

// dsgRusageThread is Linux's RUSAGE_THREAD: getrusage for the calling thread.
const dsgRusageThread = 1
