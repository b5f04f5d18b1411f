// Package spec owns what a project declares: the model definitions
// (windows, chunking, upstream sources and their contracts, run blocks,
// task edges) and the bollhav.yaml loader that builds them — the decoder
// that walks the YAML AST so every error can name file:line:col, the checks
// made at load time, {{ this }} and {{ ref }} resolution, the dev
// environment's schema suffix, and the stored form of a definition
// (ModelDefinition) that registration writes and ModelFromRecord reads back.
//
// It must not touch a store, run anything or judge state: it depends on
// graph (for task edge types) and state (for windows, intervals and
// records) only. Whatever needs a store lives in engine and its other
// sub-packages.
package spec
