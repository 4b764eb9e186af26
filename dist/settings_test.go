package dist

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkSettings: under Open MPI, 2 and 3 ranks run with the ring for the
// nonblocking all-reduce, set by Init in the environment MPI reads.
func checkSettings(t *testing.T, c *Comm) {
	if c.lib == nil || c.lib.name != openMPIABIName || c.Size() < 2 || c.Size() >= 4 {
		t.Skip("Init sets Open MPI's all-reduce algorithm for 2 and 3 ranks")
	}
	require.Equal(t, "1", os.Getenv(iallreduceEnv), "%v", c)
}
