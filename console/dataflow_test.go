package console

import (
	"strings"
	"testing"
)

// TestParseDataflow reads EXPLAIN INCREMENTAL's tree back into operators.
func TestParseDataflow(t *testing.T) {
	text := `VIEW  sales_by_product
 └─ AGG  SUM(quantity) GROUP BY product_id
     └─ PROJECT  product_id, quantity
         └─ JOIN  orders ⋈ products ON product_id
             ├─ EXCHANGE  hash(product_id)
             │   └─ PROJECT  product_id, quantity
             │       └─ SCAN  orders AS o
             └─ PROJECT  product_id
                 └─ SCAN  products AS p`
	root := parseDataflow(strings.Split(text, "\n"))
	var draw func(o *operator, depth int, out *strings.Builder)
	draw = func(o *operator, depth int, out *strings.Builder) {
		out.WriteString(strings.Repeat("  ", depth) + o.Name + " | " + o.Detail + "\n")
		for _, in := range o.Inputs {
			draw(in, depth+1, out)
		}
	}
	var got strings.Builder
	draw(root, 0, &got)
	want := `VIEW | sales_by_product
  AGG | SUM(quantity) GROUP BY product_id
    PROJECT | product_id, quantity
      JOIN | orders ⋈ products ON product_id
        EXCHANGE | hash(product_id)
          PROJECT | product_id, quantity
            SCAN | orders AS o
        PROJECT | product_id
          SCAN | products AS p
`
	if got.String() != want {
		t.Fatalf("parsed\n%s\nwant\n%s", got.String(), want)
	}
	if c := root.Inputs[0].Inputs[0].Inputs[0].Class(); c != "op-join" {
		t.Fatalf("the join's class is %q", c)
	}
}
