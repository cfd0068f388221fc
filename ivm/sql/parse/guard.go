package parse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
)

// nestingDepthMax bounds the estimated depth of a statement's parse tree
// (see nestingDepth) that may reach pg_query's C parser. pg_query walks the
// tree recursively on the C stack of the calling thread and dies with
// SIGSEGV beyond about 20,000 levels (a flat chain of 25,000 `1 +` kills the
// process); its result decoder refuses more than about 5,000 levels
// (protobuf's recursion limit). PostgreSQL 15 itself, with its default
// max_stack_depth of 2 MB, refuses a chain of about 4,050 `+` with 54001.
// 4,000 keeps every statement PostgreSQL accepts and stays five times below
// the crash.
const nestingDepthMax = 4000

// PGParse is the one entry to pg_query's parser: every caller in the code
// base goes through it (TestPGParseIsTheOnlyEntry enforces it), so that the
// depth guard runs before any statement text reaches the C code. Errors are
// pg_query's own (callers turn them into 42601) or the guard's 54001.
func PGParse(text string) (*pg_query.ParseResult, error) {
	toks, _ := tokenizePrefix(text)
	if err := checkNesting(toks); err != nil {
		return nil, err
	}
	return pgParseChecked(text)
}

// pgParseChecked calls pg_query on text whose tokens checkNesting accepted.
func pgParseChecked(text string) (*pg_query.ParseResult, error) {
	res, err := pg_query.Parse(text)
	if err != nil && strings.Contains(err.Error(), "exceeded maximum recursion depth") {
		// The decoder's limit: the tree is deeper than the estimate said
		// (e.g. deeply nested subqueries, several levels each).
		return nil, stackDepthError()
	}
	return res, err
}

// stackDepthError is PostgreSQL's answer to a statement nested too deeply.
func stackDepthError() *errcode.Error {
	return errcode.New(errcode.SQLStatementTooComplex, "stack depth limit exceeded")
}

// checkNesting refuses statements whose estimated parse-tree depth exceeds
// nestingDepthMax with PostgreSQL's 54001.
func checkNesting(toks []token) error {
	if nestingDepth(toks) > nestingDepthMax {
		return stackDepthError()
	}
	return nil
}

// nestingLevel is one open parenthesis, bracket or CASE of nestingDepth.
type nestingLevel struct {
	// operators counts the operators of the current list item at this
	// level: a chain `a + b + c` is a left-deep tree as deep as the chain.
	operators int
	// chain counts set operations and joins at this level, which chain the
	// same way across the commas of select lists.
	chain int
	// between is set after BETWEEN, whose AND does not start a new operand.
	between bool
	// isCase marks a level opened by CASE (closed by END).
	isCase bool
}

// nestingDepth estimates (from above, for the shapes that matter) the depth
// of the tree pg_query builds from toks: each open parenthesis, bracket or
// CASE adds a level, and so does every binary or unary operator, set
// operation and join of a chain (PostgreSQL's grammar builds those
// left-deep). Commas, AND/OR (flattened into one list by the grammar) and
// clause keywords start a new operand and reset the operator count of their
// level. The estimate is the maximum over the statement; ';' starts the
// next statement.
func nestingDepth(toks []token) int {
	stack := []nestingLevel{{}}
	depth, deepest := 0, 0
	note := func() {
		if depth > deepest {
			deepest = depth
		}
	}
	resetOperators := func() {
		top := &stack[len(stack)-1]
		depth -= top.operators
		top.operators = 0
	}
	push := func(isCase bool) {
		stack = append(stack, nestingLevel{isCase: isCase})
		depth++
		note()
	}
	pop := func(isCase bool) {
		if len(stack) == 1 || stack[len(stack)-1].isCase != isCase {
			return
		}
		top := stack[len(stack)-1]
		depth -= 1 + top.operators + top.chain
		stack = stack[:len(stack)-1]
	}
	addOperator := func() {
		stack[len(stack)-1].operators++
		depth++
		note()
	}
	prevEnd := -1 // end offset of the previous operator character
	for _, t := range toks {
		switch t.Kind {
		case tokPunct:
			switch t.Text {
			case "(", "[":
				push(false)
			case ")", "]":
				pop(false)
			case ",":
				resetOperators()
			case ";":
				stack, depth = stack[:1], 0
				stack[0] = nestingLevel{}
			default:
				if strings.ContainsAny(t.Text, "+-*/%^<>=~!@#&|`?:") && t.Offset != prevEnd {
					// One operator per run of operator characters (`||`,
					// `::`, `<=` are one operator each).
					addOperator()
				}
				prevEnd = t.Offset + len(t.Raw)
				continue
			}
		case tokIdent:
			switch t.Text {
			case "case":
				push(true)
			case "end":
				pop(true)
			case "union", "intersect", "except", "join":
				stack[len(stack)-1].chain++
				depth++
				note()
			case "not", "is", "isnull", "notnull", "like", "ilike", "similar", "in", "at", "collate", "overlaps", "operator":
				addOperator()
			case "between":
				addOperator()
				stack[len(stack)-1].between = true
			case "and":
				if top := &stack[len(stack)-1]; top.between {
					top.between = false
				} else {
					resetOperators()
				}
			case "or", "select", "from", "where", "group", "having", "order", "by", "limit", "offset",
				"values", "set", "on", "using", "when", "then", "else", "returning":
				resetOperators()
			}
		}
		prevEnd = -1
	}
	return deepest
}
