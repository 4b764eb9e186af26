// Command customop checks the custom ops of docs/extending.md.
package main

func main() {}
