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
)

// lookAheadBytes is the smallest spec the UI parses while it reads the
// incidents' first look: about a thousand models, 50 ms of parsing.
// Below it the two run one after the other, as every other command does.
const lookAheadBytes = 256 << 10

// openUIEngine is openEngine for the UI, which also returns the incidents'
// first look (engine.Glance) when it could read it while the spec parsed.
// At ten thousand models the parse is most of a launch, and the look —
// the failed roots from the kept counts — needs the store, not the spec;
// read side by side the program draws its first data sooner
// (docs/BENCHMARKS.md). The spec's problems still come first and alone: a
// bad spec closes the store unread and says what a serial open says.
//
// It looks ahead only for a large spec and a store that is already there
// (a SQLite file that exists, or a PostgreSQL server): a bad spec must
// never leave a new store file behind. The look reads and writes nothing
// else; a look that fails is left to the UI, which reads it again and
// says why.
func (c *cmdContext) openUIEngine(ctx gocontext.Context, cmd string) (*engine.Engine, *gate.IncidentReport, func(), int) {
	if !c.looksAhead() {
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
	e, closeStore, serr := c.storeEngine(ctx)
	var look *gate.IncidentReport
	if serr == nil {
		look, _ = e.Glance(ctx)
	}
	ls := <-specs
	if ls.err != nil {
		if closeStore != nil {
			closeStore()
		}
		return nil, nil, nil, c.specFailed(cmd, ls.err)
	}
	if serr != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, serr)
		return nil, nil, nil, ExitUsage
	}
	e.Spec = ls.sp
	if look != nil {
		look.NamePipelines(ls.sp)
	}
	return e, look, closeStore, ExitOK
}

// looksAhead reports whether openUIEngine reads the first look while the
// spec parses: a spec of at least lookAheadBytes, and a store that exists.
func (c *cmdContext) looksAhead() bool {
	fi, err := os.Stat(c.Spec)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < lookAheadBytes {
		return false
	}
	d, err := state.ParseDSN(c.dsn(), filepath.Dir(c.Spec))
	if err != nil {
		return false // the serial open says what is wrong with it
	}
	switch d.Kind {
	case state.KindPostgres:
		return true
	case state.KindSQLite:
		fi, err := os.Stat(d.Path)
		return err == nil && fi.Mode().IsRegular()
	}
	return false
}
