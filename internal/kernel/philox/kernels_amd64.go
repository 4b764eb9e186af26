//go:build amd64 && !purego

package philox

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../philox_amd64.s -stubs ../stubs_amd64.go -pkg philox"

// useAsm is set when Normals32 and Normals64 run the assembly, where the
// processor has AVX2.
var useAsm = cpu.X86.HasAVX2
