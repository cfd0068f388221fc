package parse

import "strings"

// nexmarkSource parses the rest of CREATE SOURCE name FROM NEXMARK
// [( key = literal {, key = literal} )].
func (p *frontParser) nexmarkSource(name QualifiedName) (*CreateSource, error) {
	opts, err := p.sourceOptions(false)
	if err != nil {
		return nil, err
	}
	return &CreateSource{SQL: p.text, Name: name, Nexmark: opts}, nil
}

// postgresSource parses the rest of CREATE SOURCE name FROM POSTGRES
// ( key = literal {, key = literal} ): the options are required (the
// connection and the publication have no defaults).
func (p *frontParser) postgresSource(name QualifiedName) (*CreateSource, error) {
	opts, err := p.sourceOptions(true)
	if err != nil {
		return nil, err
	}
	return &CreateSource{SQL: p.text, Name: name, Postgres: opts}, nil
}

// sourceOptions parses [( key = literal {, key = literal} )] up to the end
// of the statement (the parentheses are required when required is set). It
// never returns nil, so a caller can tell "no options" from "not this kind
// of source".
func (p *frontParser) sourceOptions(required bool) ([]SourceOption, error) {
	opts := []SourceOption{}
	if !p.acceptPunct("(") {
		if required {
			return nil, p.errAt(p.peek())
		}
	} else {
		for {
			key, err := p.identifier()
			if err != nil {
				return nil, err
			}
			if err := p.expectPunct("="); err != nil {
				return nil, err
			}
			neg := p.acceptPunct("-")
			t := p.peek()
			var v Literal
			switch {
			case t.Kind == tokNumber:
				v.Text = t.Text
				if neg {
					v.Text = "-" + v.Text
				}
			case (t.Kind == tokString || t.Kind == tokIdent) && !neg:
				v = Literal{Text: t.Text, IsString: true}
			default:
				return nil, p.errAt(t)
			}
			p.pos++
			opts = append(opts, SourceOption{Key: key, Value: v})
			if p.acceptPunct(",") {
				continue
			}
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
			break
		}
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return opts, nil
}

// kafkaSource parses the rest of CREATE SOURCE name [( column type {,
// column type} )] FROM KAFKA ( key = literal {, key = literal} ): the
// options are required (the brokers and the topic have no defaults).
func (p *frontParser) kafkaSource(name QualifiedName, columns []GenColumn) (*CreateSource, error) {
	opts, err := p.sourceOptions(true)
	if err != nil {
		return nil, err
	}
	return &CreateSource{SQL: p.text, Name: name, Columns: columns, Kafka: opts}, nil
}

// declaredColumns parses ( column type {, column type} ): each type is
// every token up to the next comma or closing parenthesis at depth 0.
func (p *frontParser) declaredColumns() ([]GenColumn, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var out []GenColumn
	for {
		name, err := p.identifier()
		if err != nil {
			return nil, err
		}
		typeStart := p.peek()
		depth := 0
		for {
			t := p.peek()
			if t.Kind == tokEOF {
				return nil, p.errAt(t)
			}
			if t.Kind == tokPunct && depth == 0 && (t.Text == "," || t.Text == ")") {
				break
			}
			if t.Kind == tokPunct && t.Text == "(" {
				depth++
			}
			if t.Kind == tokPunct && t.Text == ")" {
				depth--
			}
			p.pos++
		}
		typeEnd := p.peek()
		if typeEnd.Offset == typeStart.Offset {
			return nil, p.errAt(typeEnd)
		}
		out = append(out, GenColumn{Name: name, TypeSQL: strings.TrimSpace(p.src[typeStart.Offset:typeEnd.Offset])})
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}
