package vmath

// Constants shared by the kernels. ln2Hi has its low 21 bits zero, so
// n·ln2Hi is exact for |n| < 2^21 and ln2Hi+ln2Lo is ln 2 to about
// 2^-85 (the split of FreeBSD's msun).
const (
	ln2Hi      = 6.93147180369123816490e-01
	ln2Lo      = 1.90821492927058770002e-10
	log2e      = 1.4426950408889634
	roundMagic = 0x1.8p52 // x+roundMagic-roundMagic rounds x to an integer
	expBias    = 1023
	fracMask   = 1<<52 - 1
)
