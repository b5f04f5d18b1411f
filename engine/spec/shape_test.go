package spec

import "testing"

// Each of a model's three shapes reads as the screens show it; a fixed
// model is fixed whatever Flexibility's zero value says.
func TestShapeText(t *testing.T) {
	for _, tc := range []struct {
		t        Temporality
		f        Flexibility
		interval string
		want     string
	}{
		{Timeless, Fix, "", "timeless"},
		{Timeless, Flex, "1h", "timeless"},
		{Temporal, Fix, "1h", "fixed 1h grid"},
		{Temporal, Flex, "1d", "flexible, 1d chunks"},
	} {
		if got := ShapeText(tc.t, tc.f, tc.interval); got != tc.want {
			t.Errorf("ShapeText(%s, %s, %q) = %q, want %q", tc.t, tc.f, tc.interval, got, tc.want)
		}
	}
}
