// Command bollhav is a terminal UI pipeline explorer with an embedded engine
// for data platforms whose models are loaded window by window. main only
// dispatches: every command lives in ui/cli.
package main

import (
	"os"

	"github.com/bollhav/bollhav/ui/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
