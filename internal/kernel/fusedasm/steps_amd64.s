//go:build amd64 && !purego

#include "textflag.h"

// The assembly kernel of package ops' fused ops (see Steps64): it runs a
// block's steps one after another, each over the whole block, 4 float64 or
// 8 float32 elements an instruction and the rest one at a time, with the
// instructions the Go loops compile to (VADDSD for x[i] + y[i], …), so
// that every element gets the same bits.
//
// Registers, while steps run:
//	SI  the next step (a Record, RecordSize bytes), DI past the last
//	R8  ptrs: each location's first element
//	CX  whole vectors in the block, DX elements left after them
//	R14 steps run
//	R9, R10, R11  the step's result, first and second operand
//	BX  the byte offset into them, R12 a loop count
//	Y0-Y2 the step's values
//	Y10 zeros, Y11 -1s, Y14 1s, Y13 sign bits, Y12 Scale's constant

// The opcodes (package ops' fusedOpcode): add, sub, mul and div of two vectors are
// 0-3, and the scalar forms 4-11 repeat them (scalar inputs are read as
// vectors of copies); then the unary ops and the comparisons.
#define OP_NEG 12
#define OP_SQUARE 13
#define OP_ABS 14
#define OP_SIGN 15
#define OP_SCALE 16
#define OP_RELU 17
#define OP_GREATER 18
#define OP_LESS 19
#define OP_EQUAL 20

// BINARY computes o = x op y, op given as the macros VOP (on Y0 and the
// vector of y at (R11)(BX*1)) and SOP (on X0 and y's element there).
#define BINARY(L, VL, TL, SL, VOP, SOP) \
L: \
	XORQ  BX, BX; \
	MOVQ  CX, R12; \
	TESTQ R12, R12; \
	JZ    TL; \
VL: \
	VMOVU (R10)(BX*1), Y0; \
	VOP; \
	VMOVU Y0, (R9)(BX*1); \
	ADDQ  $32, BX; \
	DECQ  R12; \
	JNZ   VL; \
TL: \
	MOVQ  DX, R12; \
	TESTQ R12, R12; \
	JZ    next; \
SL: \
	SMOV  (R10)(BX*1), X0; \
	SOP; \
	SMOV  X0, (R9)(BX*1); \
	ADDQ  $ESIZE, BX; \
	DECQ  R12; \
	JNZ   SL; \
	JMP   next

// UNARY computes o = f(x), f given as the macros VF (on Y0) and SF (on
// X0), which may use Y1 and Y2.
#define UNARY(L, VL, TL, SL, VF, SF) \
L: \
	XORQ  BX, BX; \
	MOVQ  CX, R12; \
	TESTQ R12, R12; \
	JZ    TL; \
VL: \
	VMOVU (R10)(BX*1), Y0; \
	VF; \
	VMOVU Y0, (R9)(BX*1); \
	ADDQ  $32, BX; \
	DECQ  R12; \
	JNZ   VL; \
TL: \
	MOVQ  DX, R12; \
	TESTQ R12, R12; \
	JZ    next; \
SL: \
	SMOV  (R10)(BX*1), X0; \
	SF; \
	SMOV  X0, (R9)(BX*1); \
	ADDQ  $ESIZE, BX; \
	DECQ  R12; \
	JNZ   SL; \
	JMP   next

#define ADD_V VADD (R11)(BX*1), Y0, Y0
#define ADD_S SADD (R11)(BX*1), X0, X0
#define SUB_V VSUB (R11)(BX*1), Y0, Y0
#define SUB_S SSUB (R11)(BX*1), X0, X0
#define MUL_V VMUL (R11)(BX*1), Y0, Y0
#define MUL_S SMUL (R11)(BX*1), X0, X0
#define DIV_V VDIV (R11)(BX*1), Y0, Y0
#define DIV_S SDIV (R11)(BX*1), X0, X0

// The comparisons give 1 where they hold (all bits of a lane set, and
// with 1's), else 0; the ordered, quiet predicates: false for NaN.
#define GREATER_V VCMP $0x1e, (R11)(BX*1), Y0, Y0; VAND Y14, Y0, Y0
#define GREATER_S SCMP $0x1e, (R11)(BX*1), X0, X0; VAND X14, X0, X0
#define LESS_V VCMP $0x11, (R11)(BX*1), Y0, Y0; VAND Y14, Y0, Y0
#define LESS_S SCMP $0x11, (R11)(BX*1), X0, X0; VAND X14, X0, X0
#define EQUAL_V VCMP $0x00, (R11)(BX*1), Y0, Y0; VAND Y14, Y0, Y0
#define EQUAL_S SCMP $0x00, (R11)(BX*1), X0, X0; VAND X14, X0, X0

#define NEG_V VXOR Y13, Y0, Y0
#define NEG_S VXOR X13, X0, X0
#define SQUARE_V VMUL Y0, Y0, Y0
#define SQUARE_S SMUL X0, X0, X0
#define ABS_V VANDN Y0, Y13, Y0
#define ABS_S VANDN X0, X13, X0
#define SCALE_V VMUL Y12, Y0, Y0
#define SCALE_S SMUL X12, X0, X0

// SIGN: 1 where x > 0, -1 where x < 0, else x (±0, NaN).
#define SIGN_V \
	VCMP    $0x1e, Y10, Y0, Y1; \
	VCMP    $0x11, Y10, Y0, Y2; \
	VBLENDV Y1, Y14, Y0, Y0; \
	VBLENDV Y2, Y11, Y0, Y0
#define SIGN_S \
	VCMP    $0x1e, X10, X0, X1; \
	VCMP    $0x11, X10, X0, X2; \
	VBLENDV X1, X14, X0, X0; \
	VBLENDV X2, X11, X0, X0

// RELU is max(x, 0) as Go computes it (and vek's ReLU): -min(-x, -0),
// where min(a, b) is t1 | MIN(t1, a) for t1 = MIN(a, b), MIN giving its
// second operand where either is NaN or both are zeros.
#define RELU_V \
	VXOR Y13, Y0, Y0; \
	VMIN Y13, Y0, Y1; \
	VMIN Y0, Y1, Y2; \
	VOR  Y2, Y1, Y0; \
	VXOR Y13, Y0, Y0
#define RELU_S \
	VXOR X13, X0, X0; \
	SMIN X13, X0, X1; \
	SMIN X0, X1, X2; \
	VOR  X2, X1, X0; \
	VXOR X13, X0, X0

// STEPS is the loop over the steps, after the constants are set.
#define STEPS \
	MOVQ    code_base+0(FP), SI; \
	MOVQ    code_len+8(FP), DI; \
	IMULQ   $40, DI; \
	ADDQ    SI, DI; \
	MOVQ    ptrs_base+24(FP), R8; \
	MOVQ    n+48(FP), CX; \
	MOVQ    CX, DX; \
	SHRQ    $LANESHIFT, CX; \
	ANDQ    $LANEMASK, DX; \
	XORQ    R14, R14; \
next: \
	CMPQ    SI, DI; \
	JAE     done; \
	MOVBQZX (SI), AX; \
	CMPQ    AX, $OP_EQUAL; \
	JA      done; \
	MOVLQSX 4(SI), R9; \
	MOVQ    (R8)(R9*8), R9; \
	MOVLQSX 8(SI), R10; \
	MOVQ    (R8)(R10*8), R10; \
	MOVLQSX 12(SI), R11; \
	MOVQ    (R8)(R11*8), R11; \
	ADDQ    $40, SI; \
	INCQ    R14; \
	CMPQ    AX, $OP_NEG; \
	JAE     unary; \
	ANDQ    $3, AX; \
	JZ      add; \
	CMPQ    AX, $2; \
	JB      sub; \
	JE      mul; \
	JMP     div; \
unary: \
	JE      neg; \
	CMPQ    AX, $OP_ABS; \
	JB      square; \
	JE      abs; \
	CMPQ    AX, $OP_SCALE; \
	JB      sign; \
	JE      scale; \
	CMPQ    AX, $OP_LESS; \
	JB      reluorgreater; \
	JE      less; \
	JMP     equal; \
reluorgreater: \
	CMPQ    AX, $OP_RELU; \
	JE      relu; \
	JMP     greater; \
	BINARY(add, addv, addt, adds, ADD_V, ADD_S); \
	BINARY(sub, subv, subt, subs, SUB_V, SUB_S); \
	BINARY(mul, mulv, mult, muls, MUL_V, MUL_S); \
	BINARY(div, divv, divt, divs, DIV_V, DIV_S); \
	BINARY(greater, greaterv, greatert, greaters, GREATER_V, GREATER_S); \
	BINARY(less, lessv, lesst, lesss, LESS_V, LESS_S); \
	BINARY(equal, equalv, equalt, equals, EQUAL_V, EQUAL_S); \
	UNARY(relu, reluv, relut, relus, RELU_V, RELU_S); \
	UNARY(neg, negv, negt, negs, NEG_V, NEG_S); \
	UNARY(square, squarev, squaret, squares, SQUARE_V, SQUARE_S); \
	UNARY(abs, absv, abst, abss, ABS_V, ABS_S); \
	UNARY(sign, signv, signt, signs, SIGN_V, SIGN_S); \
scale: \
	SCALECONST; \
	UNARY(scaled, scalev, scalet, scales, SCALE_V, SCALE_S); \
done: \
	VZEROUPPER; \
	MOVQ    R14, ret+56(FP); \
	RET

// func Steps64(code []Record, ptrs []unsafe.Pointer, n int) int
#define VMOVU VMOVUPD
#define SMOV VMOVSD
#define VADD VADDPD
#define SADD VADDSD
#define VSUB VSUBPD
#define SSUB VSUBSD
#define VMUL VMULPD
#define SMUL VMULSD
#define VDIV VDIVPD
#define SDIV VDIVSD
#define VXOR VXORPD
#define VANDN VANDNPD
#define VCMP VCMPPD
#define VBLENDV VBLENDVPD
#define VAND VANDPD
#define VOR VORPD
#define VMIN VMINPD
#define SMIN VMINSD
#define SCMP VCMPSD
#define ESIZE 8
#define LANESHIFT 2
#define LANEMASK 3
#define SCALECONST VBROADCASTSD -16(SI), Y12
TEXT ·Steps64(SB), NOSPLIT, $0-64
	VPCMPEQQ Y13, Y13, Y13
	VPSRLQ   $54, Y13, Y14     // 0x3ff
	VPSLLQ   $52, Y14, Y14     // 1.0
	VPSLLQ   $63, Y13, Y13     // the sign bit
	VXORPD   Y13, Y14, Y11     // -1.0
	VXORPD   Y10, Y10, Y10
	STEPS

#undef VMOVU
#undef SMOV
#undef VADD
#undef SADD
#undef VSUB
#undef SSUB
#undef VMUL
#undef SMUL
#undef VDIV
#undef SDIV
#undef VXOR
#undef VANDN
#undef VCMP
#undef VBLENDV
#undef VAND
#undef VOR
#undef VMIN
#undef SMIN
#undef SCMP
#undef ESIZE
#undef LANESHIFT
#undef LANEMASK
#undef SCALECONST

// func Steps32(code []Record, ptrs []unsafe.Pointer, n int) int
#define VMOVU VMOVUPS
#define SMOV VMOVSS
#define VADD VADDPS
#define SADD VADDSS
#define VSUB VSUBPS
#define SSUB VSUBSS
#define VMUL VMULPS
#define SMUL VMULSS
#define VDIV VDIVPS
#define SDIV VDIVSS
#define VXOR VXORPS
#define VANDN VANDNPS
#define VCMP VCMPPS
#define VBLENDV VBLENDVPS
#define VAND VANDPS
#define VOR VORPS
#define VMIN VMINPS
#define SMIN VMINSS
#define SCMP VCMPSS
#define ESIZE 4
#define LANESHIFT 3
#define LANEMASK 7
#define SCALECONST VBROADCASTSS -20(SI), Y12
TEXT ·Steps32(SB), NOSPLIT, $0-64
	VPCMPEQD Y13, Y13, Y13
	VPSRLD   $25, Y13, Y14     // 0x7f
	VPSLLD   $23, Y14, Y14     // 1.0
	VPSLLD   $31, Y13, Y13     // the sign bit
	VXORPS   Y13, Y14, Y11     // -1.0
	VXORPS   Y10, Y10, Y10
	STEPS
