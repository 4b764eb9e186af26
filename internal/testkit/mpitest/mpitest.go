// Package mpitest launches a test binary under an MPI launcher, for the
// tests of package dist and of the programs that use it: a parent test
// re-executes its own binary under mpirun, with ChildEnv set, and the
// child tests run on every rank.
package mpitest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ChildEnv marks a test binary that a parent test started under mpirun.
const ChildEnv = "NABLA_DIST_TEST_CHILD"

// IsChild reports whether this test binary runs under mpirun, started by
// a parent test.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// Launcher is an MPI launcher: its name, command and the arguments that
// let it start more ranks than cores, as root.
type Launcher struct {
	Name string
	Cmd  string
	Args []string
}

// OpenMPI finds Open MPI's mpirun, or skips the test with the reason.
func OpenMPI(t testing.TB) Launcher {
	t.Helper()
	for _, cmd := range []string{"mpirun.openmpi", "mpirun"} {
		p, err := exec.LookPath(cmd)
		if err != nil {
			continue
		}
		if v, _ := exec.Command(p, "--version").CombinedOutput(); strings.Contains(string(v), "Open MPI") {
			return Launcher{"Open MPI", p, []string{"--allow-run-as-root", "--oversubscribe"}}
		}
	}
	t.Skip("Open MPI's mpirun is not installed (Debian: apt-get install openmpi-bin libopenmpi-dev)")
	return Launcher{}
}

// MPICH finds MPICH's mpirun, or skips the test with the reason.
func MPICH(t testing.TB) Launcher {
	t.Helper()
	for _, cmd := range []string{"mpirun.mpich", "mpiexec.mpich"} {
		if p, err := exec.LookPath(cmd); err == nil {
			return Launcher{"MPICH", p, nil}
		}
	}
	t.Skip("MPICH's mpirun is not installed (Debian: apt-get install mpich)")
	return Launcher{}
}

// Command is the command that runs args (a program and its arguments) on
// np ranks, with ChildEnv and env (KEY=value) set in their environment.
func (l Launcher) Command(ctx context.Context, np int, env []string, args ...string) *exec.Cmd {
	all := append(append(append([]string{}, l.Args...), "-np", strconv.Itoa(np)), args...)
	cmd := exec.CommandContext(ctx, l.Cmd, all...)
	cmd.Env = append(append(os.Environ(), ChildEnv+"=1"), env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs this test binary's tests matching run on np ranks, within
// timeout, and returns their combined output, exit error and duration.
func (l Launcher) Run(np int, run string, timeout time.Duration, env ...string) (string, error, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := l.Command(ctx, np, env, os.Args[0], "-test.run", run, "-test.v", "-test.count=1", "-test.timeout="+timeout.String())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return string(out), err, time.Since(start)
}
