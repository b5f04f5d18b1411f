package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/bollhav/bollhav/engine/executor"
)

// dataJSON is where a model's data lives, the "data" key of status and
// why, present only for a model on a connection (a model without one keeps
// its data in the state store's own database): connection is the
// variable's name; driver, host and database are read from its DSN (never the
// user or the password), null when the variable is unset or unreadable,
// which problem then says.
type dataJSON struct {
	Connection *string `json:"connection"`
	Driver     *string `json:"driver"`
	Host       *string `json:"host"`
	Database   *string `json:"database"`
	Problem    *string `json:"problem"`
}

func dataToJSON(h executor.DataHome) *dataJSON {
	if h.EnvVar == "" {
		return nil
	}
	j := &dataJSON{}
	v := h.EnvVar
	j.Connection = &v
	if h.Problem != "" {
		p := h.Problem
		j.Problem = &p
		return j
	}
	d, host, db := h.Location.Driver, h.Location.Host, h.Location.Database
	j.Driver, j.Host, j.Database = &d, &host, &db
	return j
}

// printDataHomes lists, under status's table, where the models on a
// connection keep their data; nothing when every model lives in the state
// store's database.
func printDataHomes(w io.Writer, homes map[string][]string, order []string) {
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, home := range order {
		names := homes[home]
		fmt.Fprintf(w, "data in %s: %s\n", home, strings.Join(names, ", "))
	}
}
