package main

import (
	"os"
	"testing"
)

// TestMain lets tests run this test binary as the okstream command in a
// subprocess (OKSTREAM_TEST_AS_MAIN=1), e.g. to kill it with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("OKSTREAM_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
