package cli

import (
	gocontext "context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// openUIEngine is openEngine for the UI, which also returns the incidents'
// first look (engine.Glance) when it could read it while the spec parsed.
// At ten thousand models the parse is most of a launch, and the look —
// the failed roots from the kept counts — needs the store, not the spec;
// read side by side the program draws its first data sooner
// (docs/BENCHMARKS.md). The spec's problems still come first and alone: a
// bad spec closes the store unread and says what a serial open says.
//
// It looks ahead only for a large spec and a SQLite store that Open will not
// write to (sqlite.Current: there, at this version): a bad spec must leave
// no new store file and no migrated one. PostgreSQL is opened after the
// spec, as before: asking whether its schema is current takes a connection
// of its own, and the goal this serves is the embedded store's. The look
// reads and writes nothing else; a look that fails is left to the UI,
// which reads it again and says why.
func (c *cmdContext) openUIEngine(ctx gocontext.Context, cmd string) (*engine.Engine, *gate.IncidentReport, func(), int) {
	if !c.looksAhead(ctx) {
		e, closeStore, code := c.openEngine(ctx, cmd)
		return e, nil, closeStore, code
	}
	type loadedSpec struct {
		sp  *spec.Spec
		err error
	}
	specs := make(chan loadedSpec, 1)
	go func() {
		sp, err := spec.Load(c.Spec)
		specs <- loadedSpec{sp, err}
	}()
	o, serr := c.openStore(ctx)
	var look *gate.IncidentReport
	if serr == nil {
		// An engine of the store alone: the spec is not there yet.
		look, _ = o.engine(nil).Glance(ctx)
	}
	ls := <-specs
	if ls.err != nil {
		if o != nil {
			o.close()
		}
		return nil, nil, nil, c.specFailed(cmd, ls.err)
	}
	if serr != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, serr)
		return nil, nil, nil, ExitUsage
	}
	if look != nil {
		look.NamePipelines(ls.sp)
	}
	return o.engine(ls.sp), look, o.close, ExitOK
}

// looksAhead reports whether openUIEngine reads the first look while the
// spec parses: a large spec (spec.LargeBytes; below it the two run one
// after the other, as every other command does), over a SQLite store that
// is already current.
func (c *cmdContext) looksAhead(ctx gocontext.Context) bool {
	fi, err := os.Stat(c.Spec)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < spec.LargeBytes {
		return false
	}
	d, err := state.ParseDSN(c.dsn(), filepath.Dir(c.Spec))
	if err != nil || d.Kind != state.KindSQLite {
		return false // a bad DSN: the serial open says what is wrong with it
	}
	current, err := sqlite.Current(ctx, d.Path)
	return err == nil && current
}
