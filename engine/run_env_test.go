package engine

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
)

func TestResolveRunSettingsFlagsWinOverEnvironment(t *testing.T) {
	env := map[string]string{"STATE_MODE": "torch", "INTERVAL_OVERRIDE": "1d", "SCHEMA_SUFFIX": "pr7"}
	getenv := func(k string) string { return env[k] }

	mode, iv, e, err := ResolveRunSettings(RunFlags{}, getenv)
	if err != nil || mode != spec.Torch || iv == nil || iv.String() != "1d" || e.Suffix != "pr7" {
		t.Fatalf("from the environment: %v %v %v %v", mode, iv, e, err)
	}
	mode, iv, e, err = ResolveRunSettings(RunFlags{Mode: "discover", IntervalOverride: "6h", Env: "", EnvGiven: true}, getenv)
	if err != nil || mode != spec.Discover || iv.String() != "6h" || e.Suffix != "" {
		t.Fatalf("flags win (--env '' means prod): %v %v %v %v", mode, iv, e, err)
	}
	mode, iv, e, err = ResolveRunSettings(RunFlags{}, func(string) string { return "" })
	if err != nil || mode != spec.Bulldozer || iv != nil || e.Suffix != "" {
		t.Fatalf("defaults: %v %v %v %v", mode, iv, e, err)
	}
}

func TestResolveRunSettingsNamesTheBadSource(t *testing.T) {
	cases := []struct {
		flags RunFlags
		env   map[string]string
		want  string
	}{
		{RunFlags{}, map[string]string{"STATE_MODE": "nuke"}, "environment variable STATE_MODE"},
		{RunFlags{Mode: "nuke"}, nil, "--mode"},
		{RunFlags{}, map[string]string{"INTERVAL_OVERRIDE": "1x"}, "environment variable INTERVAL_OVERRIDE"},
		{RunFlags{IntervalOverride: "0h"}, nil, "--interval-override"},
		{RunFlags{}, map[string]string{"SCHEMA_SUFFIX": `x"; DROP TABLE y; --`}, "environment variable SCHEMA_SUFFIX"},
		{RunFlags{Env: "a-b", EnvGiven: true}, nil, "--env"},
	}
	for _, c := range cases {
		_, _, _, err := ResolveRunSettings(c.flags, func(k string) string { return c.env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v %v: got %v, want an error starting %q", c.flags, c.env, err, c.want)
		}
	}
}
