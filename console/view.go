package console

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/errcode"
)

// viewPage is what /console/view?name=v shows.
type viewPage struct {
	DB   string
	Name string
	// View is the view's status line; nil when there is no such view.
	View *viewLine
	// Plan is the view's plan tree from EXPLAIN INCREMENTAL, and Explain
	// its text as the statement returns it.
	Plan    *operator
	Explain string
	// Dataflow is the operators running, with their numbers; Progress
	// the view's filling while it is filled.
	Dataflow dataflowPart
	Progress progressPart
	Error    *sqlError
}

// operator is one node of a plan (EXPLAIN INCREMENTAL) or a dataflow
// (EXPLAIN ANALYZE INCREMENTAL).
type operator struct {
	// Name is the operator ("AGG", "JOIN", "EXCHANGE", ... in a plan;
	// "aggregate", "join inner", "source t", ... in a dataflow), Detail
	// its arguments as EXPLAIN INCREMENTAL prints them.
	Name, Detail string
	// Number and Stats are an operator's number and numbers in EXPLAIN
	// ANALYZE INCREMENTAL (nil Stats: none read).
	Number string
	Stats  *operatorStats
	Inputs []*operator
}

// Class is the CSS class of the operator's box: its first word.
func (o *operator) Class() string {
	word, _, _ := strings.Cut(o.Name, " ")
	return "op-" + strings.ToLower(word)
}

func (c *console) view(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("name")
	if name == "" {
		name = r.FormValue("view")
	}
	page := viewPage{DB: database(r), Name: name}
	page.Dataflow = dataflowPart{DB: page.DB, View: name}
	page.Progress = progressPart{DB: page.DB, View: name}
	if name == "" {
		page.Error = describeError(errcode.New(errcode.ConsoleBadRequest, "no view named: open /console/view?name=<view>"))
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "view.html", page)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	if err := c.readView(ctx, r, &page); err != nil {
		page.Error = describeError(err)
	}
	c.render(w, "view.html", page)
}

// readView fills page with the view's status, plan, dataflow and
// progress.
func (c *console) readView(ctx context.Context, r *http.Request, page *viewPage) error {
	conn, err := c.connect(ctx, r, page.DB, nil)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	views, err := readViews(ctx, conn)
	if err != nil {
		return err
	}
	for i := range views {
		if views[i].Name == page.Name && views[i].Kind == "materialized" {
			page.View = &views[i]
		}
	}
	if page.View == nil {
		return errcode.New(errcode.ConsoleBadRequest, "there is no materialized view %q in database %q", page.Name, page.DB)
	}
	_, rows, err := textRows(ctx, conn, "EXPLAIN INCREMENTAL "+quoteIdent(page.Name))
	if err != nil {
		return err
	}
	lines := make([]string, 0, len(rows))
	for _, row := range rows {
		lines = append(lines, text(row[0]))
	}
	page.Explain = strings.Join(lines, "\n")
	page.Plan = parseDataflow(lines)
	if err := readDataflow(ctx, conn, &page.Dataflow); err != nil {
		page.Dataflow.Error = describeError(err)
	}
	if err := readProgress(ctx, conn, &page.Progress); err != nil {
		page.Progress.Error = describeError(err)
	}
	return nil
}

// parseDataflow reads the operator tree EXPLAIN INCREMENTAL draws: each
// line is an operator, indented four columns per level under the one it
// feeds, drawn with box characters:
//
//	VIEW  totals
//	 └─ AGG  SUM(amount) GROUP BY customer
//	     └─ SCAN  orders
//
// Lines it cannot place (none today) are attached to the last operator.
func parseDataflow(lines []string) *operator {
	var root *operator
	var stack []*operator // stack[d] is the last operator at depth d
	for _, line := range lines {
		column, rest := 0, line
		for rest != "" {
			r, size := utf8.DecodeRuneInString(rest)
			if !strings.ContainsRune(" │├└─", r) {
				break
			}
			column++
			rest = rest[size:]
		}
		if rest == "" {
			continue
		}
		name, detail, _ := strings.Cut(rest, "  ")
		op := &operator{Name: name, Detail: strings.TrimSpace(detail)}
		depth := column / 4
		if root == nil {
			root, stack = op, []*operator{op}
			continue
		}
		depth = max(1, min(depth, len(stack)))
		stack = stack[:depth]
		parent := stack[depth-1]
		parent.Inputs = append(parent.Inputs, op)
		stack = append(stack, op)
	}
	return root
}
