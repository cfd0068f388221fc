package parse

// nexmarkSource parses the rest of CREATE SOURCE name FROM NEXMARK
// [( key = literal {, key = literal} )].
func (p *frontParser) nexmarkSource(name QualifiedName) (*CreateSource, error) {
	src := &CreateSource{SQL: p.text, Name: name, Nexmark: []SourceOption{}}
	if p.acceptPunct("(") {
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
			src.Nexmark = append(src.Nexmark, SourceOption{Key: key, Value: v})
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
	return src, nil
}
