// Package testkit holds, in its subpackages, what nabla's tests share and
// nothing else imports: the built-in op table (optable), fuzz targets over
// the whole stack (fuzztest), the sweep of exported builders with hostile
// arguments (sweep), finite differences (fdtest), DOT checks
// (dottest), a reference network (testnet), the OpenBLAS peer
// (blaspeer), MPI launches (mpitest), a thread's CPU time (cputime) and
// the file:line of a test's own code (site).
// Only test files import them; a test here keeps it so.
package testkit
