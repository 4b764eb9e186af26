package onnx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/onnx/onnxpb"
)

// The attributes each op's importer implements. Every attribute of a node
// is checked against its op's table before the node is built: an
// attribute the table lacks, or a value its rule refuses, is the node's
// error, so that no attribute is ignored while what it asks for is not
// what Import builds. Each family's file fills the table beside its
// importers (accept), and an importer may read only the attributes its
// op's table names (nodeContext.attr).

// attrRule is how Import treats one attribute of an op.
type attrRule struct {
	// from and to bound the opsets at which the attribute is accepted
	// (0: no bound): outside them it is refused as an unknown one.
	from, to int64
	// check refuses the values Import does not implement; nil when every
	// value is, or when no value changes what Import builds (a training
	// setting of an op imported for inference, say).
	check func(c *nodeContext, a *onnxpb.AttributeProto) error
	// absent says that check also judges a node without the attribute
	// (given an attribute of that name and no value, so that it reads the
	// default): for a default Import does not implement.
	absent bool
}

// opsets returns the rule bounded to the opsets from to to (0: no bound).
func (r attrRule) opsets(from, to int64) attrRule {
	r.from, r.to = from, to
	return r
}

// attrs are one op's attributes, by name.
type attrs map[string]attrRule

// attributes holds the attributes of each op Import supports; an op
// without an entry takes none.
var attributes = map[string]attrs{}

// accept adds ops' attributes to the table.
func accept(table map[string]attrs) {
	for op, a := range table {
		attributes[op] = a
	}
}

// everywhere are attributes any op may carry: consumed_inputs is a
// memory hint of opsets 1 to 5 that changes no value.
var everywhere = attrs{"consumed_inputs": {to: 5}}

// rule returns the rule of op's attribute at opset, if it is accepted there.
func rule(op, name string, opset int64) (attrRule, bool) {
	r, ok := attributes[op][name]
	if !ok {
		r, ok = everywhere[name]
	}
	if !ok || (r.from != 0 && opset < r.from) || (r.to != 0 && opset > r.to) {
		return attrRule{}, false
	}
	return r, true
}

// declared reports whether op's table names the attribute, at any opset.
func declared(op, name string) bool {
	_, ok := attributes[op][name]
	if !ok {
		_, ok = everywhere[name]
	}
	return ok
}

// checkAttributes refuses the node's attributes that its op's table
// lacks at the model's opset, that are given twice, or whose values the
// table's rules refuse.
func (c *nodeContext) checkAttributes() error {
	op, opset := c.proto.GetOpType(), c.im.opset
	var unknown []string
	seen := map[string]bool{}
	for _, a := range c.proto.GetAttribute() {
		name := a.GetName()
		if seen[name] {
			return fmt.Errorf("attribute %q is given twice", name)
		}
		seen[name] = true
		r, ok := rule(op, name, opset)
		if !ok {
			unknown = append(unknown, strconv.Quote(name))
			continue
		}
		if r.check == nil {
			continue
		}
		if err := c.runCheck(r, a); err != nil {
			return err
		}
	}
	if len(unknown) == 0 {
		for _, name := range keys(attributes[op]) {
			if r, ok := rule(op, name, opset); ok && r.absent && !seen[name] {
				if err := c.runCheck(r, &onnxpb.AttributeProto{Name: &name}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var known []string
	for _, name := range keys(attributes[op]) {
		if _, ok := rule(op, name, opset); ok {
			known = append(known, name)
		}
	}
	implemented := strings.Join(known, ", ")
	if implemented == "" {
		implemented = "none"
	}
	noun := "attribute"
	if len(unknown) > 1 {
		noun = "attributes"
	}
	return unsupported("%s %s (implemented for %s at opset %d: %s)", noun, strings.Join(unknown, ", "), op, opset, implemented)
}

// runCheck runs r's check of the node's attribute a.
func (c *nodeContext) runCheck(r attrRule, a *onnxpb.AttributeProto) error {
	err := r.check(c, a)
	if c.bad != nil { // of another type than the rule reads
		return c.bad
	}
	return err
}

// onlyInts accepts the listed values of an INT attribute.
func onlyInts(values ...int) attrRule {
	return attrRule{check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
		if v := c.attrInt(a.GetName(), values[0]); !slices.Contains(values, v) {
			return unsupported("%s %d (implemented: %s)", a.GetName(), v, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(values)), ", "), "[]"))
		}
		return nil
	}}
}

// atLeast accepts the values of an INT attribute from least on.
func atLeast(least int) attrRule {
	return attrRule{check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
		if v := c.attrInt(a.GetName(), least); v < least {
			return fmt.Errorf("%s %d: must be at least %d", a.GetName(), v, least)
		}
		return nil
	}}
}

// onlyStrings accepts the listed values of a STRING attribute.
func onlyStrings(values ...string) attrRule {
	return attrRule{check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
		if v := c.attrString(a.GetName(), values[0]); !slices.Contains(values, v) {
			quoted := make([]string, len(values))
			for i, s := range values {
				quoted[i] = strconv.Quote(s)
			}
			return unsupported("%s %q (implemented: %s)", a.GetName(), v, strings.Join(quoted, ", "))
		}
		return nil
	}}
}

// allOnes accepts an INTS attribute whose values are all 1.
var allOnes = attrRule{check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
	for _, v := range c.attrInts(a.GetName()) {
		if v != 1 {
			return unsupported("%s %v (implemented: 1 on every axis)", a.GetName(), c.attrInts(a.GetName()))
		}
	}
	return nil
}}

// inference accepts is_test (opsets 1 to 6 of BatchNormalization and
// Dropout) when it says test mode, which Import builds. Its default is 0,
// training mode: a node without it is refused too.
var inference = attrRule{to: 6, absent: true, check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
	switch {
	case c.attrInt(a.GetName(), 0) != 0:
		return nil
	case !c.has(a.GetName()):
		return unsupported("is_test absent: its default, 0, is training mode (implemented: is_test 1, Import builds inference)")
	}
	return unsupported("is_test 0, training mode (implemented: is_test 1, Import builds inference)")
}}

// legacyBroadcast are the broadcast and axis attributes of binary ops
// before opset 7: B broadcasts onto A with its axes aligned from A's
// axis on. Import broadcasts as numpy does, aligning B with A's last
// axes, which is the same where axis is A's rank minus B's or B holds one
// value.
var legacyBroadcast = attrs{
	"broadcast": {to: 6},
	"axis": {to: 6, check: func(c *nodeContext, a *onnxpb.AttributeProto) error {
		axis := c.attrInt("axis", 0)
		if c.attrInt("broadcast", 0) == 0 || len(c.in) < 2 || c.in[0] == nil || c.in[1] == nil {
			return nil // no broadcasting: A and B have one shape
		}
		x, y := c.in[0].Type(), c.in[1].Type()
		if axis < 0 {
			axis += x.Rank()
		}
		if axis == x.Rank()-y.Rank() || y.Size() == 1 {
			return nil
		}
		return unsupported("axis %d with broadcast 1: B %v aligned with A %v from axis %d (implemented: B aligned with A's last axes, axis %d)", c.attrInt("axis", 0), y, x, axis, x.Rank()-y.Rank())
	}},
}

// with returns the union of attribute tables.
func with(tables ...attrs) attrs {
	out := attrs{}
	for _, t := range tables {
		for name, r := range t {
			out[name] = r
		}
	}
	return out
}
