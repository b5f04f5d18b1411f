package tui

import "os"

// withDefaults fills the options left empty.
func withDefaults(o Options) Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return o
}
