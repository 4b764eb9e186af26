package dist

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkLocal: MPI's count of the ranks on this machine agrees with the
// launcher's own variables (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK and
// _LOCAL_SIZE, MPICH Hydra's MPI_LOCALRANKID and MPI_LOCALNRANKS), and,
// every rank of these tests running on this one machine, with the rank.
func checkLocal(t *testing.T, c *Comm) {
	require.Equal(t, c.Rank(), c.LocalRank(), "%v", c)
	require.Equal(t, c.Size(), c.LocalSize(), "%v", c)
	for _, v := range [][2]string{{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}, {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}} {
		if r := os.Getenv(v[0]); r != "" && c.Size() > 1 {
			require.Equal(t, r, strconv.Itoa(c.LocalRank()), "%v: %s", c, v[0])
			require.Equal(t, os.Getenv(v[1]), strconv.Itoa(c.LocalSize()), "%v: %s", c, v[1])
			return
		}
	}
	if c.Size() > 1 {
		t.Fatalf("%v: the launcher set none of the local variables checked", c)
	}
}
