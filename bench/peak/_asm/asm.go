// Command asm generates bench/peak's FMA loops (fma_amd64.s and their Go
// declarations) with avo:
//
//	cd bench/peak/_asm && go run . -out ../fma_amd64.s -stubs ../fma_amd64_stubs.go -pkg main
//
// (go generate ./bench/peak/ runs the same). Each loop keeps Chains
// independent accumulators in ymm registers (AVX2) or zmm registers
// (AVX-512) and adds a·b to each of them with one VFMADD231 per
// accumulator per iteration: enough independent chains to cover the FMA
// latency on two FMA pipes (4 cycles × 2 pipes = 8 on Zen 3, Haswell to
// Ice Lake), so the loop runs at the FMA units' throughput.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Chains is the number of independent accumulators (and of FMAs per
// iteration).
const Chains = 12

func main() {
	ConstraintExpr("amd64,!purego")
	loop("fmaF64", "float64", ymm, VBROADCASTSD, VXORPD, VFMADD231PD, VMOVUPD, 8)
	loop("fmaF32", "float32", ymm, VBROADCASTSS, VXORPS, VFMADD231PS, VMOVUPS, 4)
	// AVX512F has no VXORPD on zmm (that is AVX512DQ): VPXORQ zeroes.
	loop("fmaF64AVX512", "float64", zmm, VBROADCASTSD, VPXORQ, VFMADD231PD, VMOVUPD, 8)
	loop("fmaF32AVX512", "float32", zmm, VBROADCASTSS, VPXORQ, VFMADD231PS, VMOVUPS, 4)
	Generate()
}

// vecs is a kind of vector register: its name, its size in bytes and
// how to allocate one.
type vecs struct {
	name  string
	bytes int
	alloc func() reg.VecVirtual
}

var (
	ymm = vecs{"ymm", 32, YMM}
	zmm = vecs{"zmm", 64, ZMM}
)

// loop emits func name(n int, a, b T, out *T): n iterations of Chains
// FMAs acc[i] += a·b on v's registers, starting from zero; then it stores
// the accumulators to out[0 : Chains·lanes], lanes = v.bytes/size elements
// of size bytes per register.
func loop(name, elem string, v vecs,
	broadcast, xor, fma, store func(...Op),
	size int,
) {
	lanes := v.bytes / size
	TEXT(name, NOSPLIT, fmt.Sprintf("func(n int, a, b %s, out *%s)", elem, elem))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s runs n iterations of %d independent %s FMA chains acc += a·b (%d flops an iteration) from zero and stores the accumulators to out[:%d].",
		name, Chains, v.name, Chains*lanes*2, Chains*lanes))
	n := Load(Param("n"), GP64())
	a, b := v.alloc(), v.alloc()
	for _, p := range []struct {
		name string
		reg  reg.VecVirtual
	}{{"a", a}, {"b", b}} {
		x := XMM()
		Load(Param(p.name), x)
		broadcast(x, p.reg)
	}
	acc := make([]reg.VecVirtual, Chains)
	for i := range acc {
		acc[i] = v.alloc()
		xor(acc[i], acc[i], acc[i])
	}
	TESTQ(n, n)
	JZ(LabelRef("done"))
	Label("loop")
	for i := range acc {
		fma(b, a, acc[i])
	}
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
	out := Load(Param("out"), GP64())
	for i := range acc {
		store(acc[i], Mem{Base: out, Disp: v.bytes * i})
	}
	VZEROUPPER()
	RET()
}
