module github.com/bollhav/bollhav

go 1.26

require (
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
)
