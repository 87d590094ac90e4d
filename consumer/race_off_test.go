//go:build !race

package consumer

const raceEnabled = false
