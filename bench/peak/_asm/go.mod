module github.com/nabla-go/nabla/bench/peak/asm

go 1.26

require github.com/mmcloughlin/avo v0.6.0

require (
	golang.org/x/mod v0.21.0 // indirect
	golang.org/x/sync v0.8.0 // indirect
	golang.org/x/tools v0.26.0 // indirect; avo v0.6.0 asks for v0.16.1, which does not build with Go 1.26
)
