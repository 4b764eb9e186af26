// Package dottest checks DOT output in nabla's tests: it parses it with
// gonum's DOT parser, renders it with Graphviz when Graphviz is installed
// (checking that every node is drawn with the label the DOT gives it), and
// compares it with golden files, which the -update flag rewrites.
package dottest
