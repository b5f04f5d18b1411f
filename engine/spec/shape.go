package spec

// ShapeText is how a model is chunked, in the words every surface shows it
// with (the CLI's and the UI's why, the UI's model screen): "timeless",
// "fixed 1h grid" or "flexible, 1h chunks". interval is the grain as
// written; it is not read for a timeless model.
func ShapeText(t Temporality, f Flexibility, interval string) string {
	switch {
	case t == Timeless:
		return "timeless"
	case f == Flex:
		return "flexible, " + interval + " chunks"
	default:
		return "fixed " + interval + " grid"
	}
}
