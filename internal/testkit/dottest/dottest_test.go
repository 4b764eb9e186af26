package dottest

import "testing"

func TestUnquote(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`n12`, "n12", true},
		{`"a b"`, "a b", true},
		{`"say \"hi\""`, `say "hi"`, true},
		{`"C:\\dir\\"`, `C:\dir\`, true},
		{`"two\nlines"`, "two\nlines", true},
		{`"\N"`, "", false},  // Graphviz would draw the node's name
		{`"\l"`, "", false},  // a left-justified line break: never written
		{`"a"b"`, "", false}, // an unescaped quote
		{"\"a\nb\"", "", false},
		{`"open`, "", false},
		{`"end\"`, "", false},
	}
	for _, c := range cases {
		got, err := Unquote(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("case %s: got %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestSVGNodes(t *testing.T) {
	svg := []byte(`<svg><g id="graph0" class="graph"><title>g</title>
<g id="node1" class="node"><title>n0</title><text>say &quot;hi&quot; &lt;x&gt;</text><text>input</text></g>
<g id="edge1" class="edge"><title>n0&#45;&gt;n1</title><text>(2)</text></g>
<g id="node2" class="node"><title>n1</title><text>Neg</text></g>
</g></svg>`)
	got, err := svgNodes(svg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"n0": "say \"hi\" <x>\ninput", "n1": "Neg"}
	if len(got) != len(want) || got["n0"] != want["n0"] || got["n1"] != want["n1"] {
		t.Errorf("got %q, want %q", got, want)
	}
}
