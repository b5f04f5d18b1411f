package engine

import (
	"fmt"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// RunFlags are a run's settings as an operator gave them on the command
// line; empty means "not given".
type RunFlags struct {
	Mode             string
	IntervalOverride string
	Env              string
	// EnvGiven is true when --env was given, even as "" (prod).
	EnvGiven bool
}

// ResolveRunSettings applies the environment variables STATE_MODE,
// INTERVAL_OVERRIDE and SCHEMA_SUFFIX under the flags: a flag, when given,
// wins over its variable; neither leaves the default (bulldozer, each model's
// own interval, prod). getenv is os.Getenv in production. Every value is
// validated, and an error names where the bad value came from.
func ResolveRunSettings(flags RunFlags, getenv func(string) string) (spec.StateMode, *state.Interval, spec.Env, error) {
	pick := func(flag, name string) (string, string) {
		if flag != "" {
			return flag, "flag"
		}
		return getenv(name), name
	}
	modeText, modeFrom := pick(flags.Mode, spec.StateModeEnvVar)
	mode, err := spec.ParseStateMode(modeText)
	if err != nil {
		return "", nil, spec.Env{}, fmt.Errorf("%s: %w", from(modeFrom, "--mode"), err)
	}
	var override *state.Interval
	if text, src := pick(flags.IntervalOverride, spec.IntervalOverrideEnvVar); text != "" {
		iv, err := state.ParseInterval(text)
		if err != nil {
			return "", nil, spec.Env{}, fmt.Errorf("%s: %w", from(src, "--interval-override"), err)
		}
		override = &iv
	}
	suffix, suffixFrom := flags.Env, "flag"
	if !flags.EnvGiven {
		suffix, suffixFrom = getenv(spec.SchemaSuffixEnvVar), spec.SchemaSuffixEnvVar
	}
	env, err := spec.ParseEnv(suffix)
	if err != nil {
		return "", nil, spec.Env{}, fmt.Errorf("%s: %w", from(suffixFrom, "--env"), err)
	}
	return mode, override, env, nil
}

func from(src, flag string) string {
	if src == "flag" {
		return flag
	}
	return "environment variable " + src
}
