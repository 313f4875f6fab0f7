// Package early sets the garbage collector's early target of a start
// (startgc.BeginEarly) in its init, which runs before that of the heavy
// packages (schemes, protobuf descriptors, OpenAPI definitions) as long as
// the command imports it.
package early

import "github.com/capstan-io/capstan/internal/startgc"

func init() { startgc.BeginEarly() }
