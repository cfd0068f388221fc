package expr

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/ivm/types"
)

// String functions. Case mapping follows the C locale (ASCII letters only),
// like a PostgreSQL database created with LC_CTYPE=C.

func asciiUpper(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func isASCIIAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func initcap(s string) string {
	b := []byte(s)
	wordStart := true
	for i, c := range b {
		// NB: PostgreSQL's C-locale initcap treats non-ASCII bytes as
		// non-alphanumeric word separators.
		if isASCIIAlnum(c) {
			if wordStart {
				if c >= 'a' && c <= 'z' {
					b[i] = c - ('a' - 'A')
				}
			} else if c >= 'A' && c <= 'Z' {
				b[i] = c + ('a' - 'A')
			}
			wordStart = false
		} else {
			wordStart = true
		}
	}
	return string(b)
}

func runeLen(s string) int64 { return int64(utf8.RuneCountInString(s)) }

// runeSlice returns the characters [from, to) of s (0-based, clamped).
func runeSlice(s string, from, to int64) string {
	if from < 0 {
		from = 0
	}
	if to <= from {
		return ""
	}
	i := 0
	var k int64
	for k < from && i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	j := i
	for k < to && j < len(s) {
		_, size := utf8.DecodeRuneInString(s[j:])
		j += size
		k++
	}
	return s[i:j]
}

// substr is PostgreSQL's text_substr: 1-based start, optional length.
func substr(s string, start int64, length int64, hasLength bool) (types.Datum, error) {
	if hasLength && length < 0 {
		return nil, EvalError("22011", "negative substring length not allowed")
	}
	from := start - 1
	to := int64(1) << 62
	if hasLength {
		to = from + length
		if length > 0 && to < from { // overflow
			to = int64(1) << 62
		}
	}
	return runeSlice(s, from, to), nil
}

func trimChars(s, chars string, left, right bool) string {
	set := func(r rune) bool { return strings.ContainsRune(chars, r) }
	if left {
		s = strings.TrimLeftFunc(s, set)
	}
	if right {
		s = strings.TrimRightFunc(s, set)
	}
	return s
}

func pad(s string, length int64, fill string, left bool) (string, error) {
	if length <= 0 {
		return "", nil
	}
	n := runeLen(s)
	if n >= length {
		return runeSlice(s, 0, length), nil
	}
	if fill == "" {
		return s, nil
	}
	// PostgreSQL checks the worst case (every character 4 bytes) before
	// it allocates; so do we, with the same answer.
	if lengthTooLarge(length * encodingCharBytesMax) {
		return "", errRequestedLengthTooLarge()
	}
	need := length - n
	var b strings.Builder
	fr := []rune(fill)
	padding := make([]rune, 0, need)
	for i := int64(0); i < need; i++ {
		padding = append(padding, fr[i%int64(len(fr))])
	}
	if left {
		b.WriteString(string(padding))
		b.WriteString(s)
	} else {
		b.WriteString(s)
		b.WriteString(string(padding))
	}
	return b.String(), nil
}

func textFn1(name string, fn func(s string) types.Datum, result types.Type) *Func {
	return f1(name, types.TText, result, func(a types.Datum) (types.Datum, error) { return fn(a.(string)), nil })
}

// outputText renders any value as its output function would (bool as t/f),
// used by concat and friends.
func outputText(env *Env, t types.Type, v types.Datum) string {
	return types.FormatStyle(t, v, envStyle(env))
}

func registerString(add adder) {
	for _, name := range []string{"length", "char_length", "character_length"} {
		add(textFn1(name, func(s string) types.Datum { return runeLen(s) }, types.TInt4),
			f1(name, types.Type{Kind: types.KindChar, Typmod: -1}, types.TInt4, func(a types.Datum) (types.Datum, error) {
				return runeLen(types.TrimBpchar(a.(string))), nil
			}))
	}
	add(f1("length", types.TBytea, types.TInt4, func(a types.Datum) (types.Datum, error) { return int64(len(a.([]byte))), nil }),
		textFn1("octet_length", func(s string) types.Datum { return int64(len(s)) }, types.TInt4),
		f1("octet_length", types.TBytea, types.TInt4, func(a types.Datum) (types.Datum, error) { return int64(len(a.([]byte))), nil }),
		textFn1("bit_length", func(s string) types.Datum { return int64(len(s)) * 8 }, types.TInt4),
		textFn1("lower", func(s string) types.Datum { return asciiLower(s) }, types.TText),
		textFn1("upper", func(s string) types.Datum { return asciiUpper(s) }, types.TText),
		textFn1("initcap", func(s string) types.Datum { return initcap(s) }, types.TText),
		textFn1("reverse", func(s string) types.Datum {
			r := []rune(s)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r)
		}, types.TText),
		textFn1("md5", func(s string) types.Datum { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }, types.TText),
		f1("md5", types.TBytea, types.TText, func(a types.Datum) (types.Datum, error) {
			sum := md5.Sum(a.([]byte))
			return hex.EncodeToString(sum[:]), nil
		}),
		textFn1("ascii", func(s string) types.Datum {
			if s == "" {
				return int64(0)
			}
			r, _ := utf8.DecodeRuneInString(s)
			return int64(r)
		}, types.TInt4),
		f1("chr", types.TInt4, types.TText, func(a types.Datum) (types.Datum, error) {
			c := a.(int64)
			if c == 0 {
				return nil, EvalError("54000", "null character not permitted")
			}
			if c < 0 || c > utf8.MaxRune || (c >= 0xD800 && c <= 0xDFFF) {
				return nil, EvalError("54000", "requested character too large for encoding: %d", c)
			}
			return string(rune(c)), nil
		}),
	)
	for _, name := range []string{"substr", "substring"} {
		add(f2(name, types.TText, types.TInt4, types.TText, func(a, b types.Datum) (types.Datum, error) {
			return substr(a.(string), b.(int64), 0, false)
		}),
			strict(name, []types.Type{types.TText, types.TInt4, types.TInt4}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
				return substr(a[0].(string), a[1].(int64), a[2].(int64), true)
			}))
	}
	add(f2("strpos", types.TText, types.TText, types.TInt4, func(a, b types.Datum) (types.Datum, error) {
		return strpos(a.(string), b.(string)), nil
	}),
		// position(sub IN s) is position(s, sub) after parsing.
		f2("position", types.TText, types.TText, types.TInt4, func(a, b types.Datum) (types.Datum, error) {
			return strpos(a.(string), b.(string)), nil
		}),
		strict("replace", []types.Type{types.TText, types.TText, types.TText}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
			text, from, to := a[0].(string), a[1].(string), a[2].(string)
			if from == "" {
				return a[0], nil
			}
			if grow := int64(strings.Count(text, from)) * int64(len(to)-len(from)); grow > 0 {
				if grow > ValueBytesMax {
					grow = ValueBytesMax
				}
				if err := CheckTextGrowth(len(text), int(grow)); err != nil {
					return nil, err
				}
			}
			return strings.ReplaceAll(text, from, to), nil
		}),
		strict("translate", []types.Type{types.TText, types.TText, types.TText}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
			from, to := []rune(a[1].(string)), []rune(a[2].(string))
			var b strings.Builder
			for _, r := range a[0].(string) {
				idx := -1
				for i, f := range from {
					if f == r {
						idx = i
						break
					}
				}
				switch {
				case idx < 0:
					b.WriteRune(r)
				case idx < len(to):
					b.WriteRune(to[idx])
				}
			}
			return b.String(), nil
		}),
	)
	for _, tr := range []struct {
		name        string
		left, right bool
	}{{"btrim", true, true}, {"trim", true, true}, {"ltrim", true, false}, {"rtrim", false, true}} {
		tr := tr
		add(textFn1(tr.name, func(s string) types.Datum { return trimChars(s, " ", tr.left, tr.right) }, types.TText),
			f2(tr.name, types.TText, types.TText, types.TText, func(a, b types.Datum) (types.Datum, error) {
				return trimChars(a.(string), b.(string), tr.left, tr.right), nil
			}))
	}
	for _, p := range []struct {
		name string
		left bool
	}{{"lpad", true}, {"rpad", false}} {
		p := p
		add(f2(p.name, types.TText, types.TInt4, types.TText, func(a, b types.Datum) (types.Datum, error) {
			return pad(a.(string), b.(int64), " ", p.left)
		}),
			strict(p.name, []types.Type{types.TText, types.TInt4, types.TText}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
				return pad(a[0].(string), a[1].(int64), a[2].(string), p.left)
			}))
	}
	add(f2("left", types.TText, types.TInt4, types.TText, func(a, b types.Datum) (types.Datum, error) {
		s, n := a.(string), b.(int64)
		if n < 0 {
			return runeSlice(s, 0, runeLen(s)+n), nil
		}
		return runeSlice(s, 0, n), nil
	}),
		f2("right", types.TText, types.TInt4, types.TText, func(a, b types.Datum) (types.Datum, error) {
			s, n := a.(string), b.(int64)
			l := runeLen(s)
			if n < 0 {
				return runeSlice(s, -n, l), nil
			}
			return runeSlice(s, l-n, l), nil
		}),
		f2("repeat", types.TText, types.TInt4, types.TText, func(a, b types.Datum) (types.Datum, error) {
			n := b.(int64)
			if n <= 0 {
				return "", nil
			}
			if lengthTooLarge(int64(len(a.(string))) * n) {
				return nil, errRequestedLengthTooLarge()
			}
			return strings.Repeat(a.(string), int(n)), nil
		}),
		f2("starts_with", types.TText, types.TText, types.TBool, func(a, b types.Datum) (types.Datum, error) {
			return strings.HasPrefix(a.(string), b.(string)), nil
		}),
		strict("split_part", []types.Type{types.TText, types.TText, types.TInt4}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
			s, sep, n := a[0].(string), a[1].(string), a[2].(int64)
			if n == 0 {
				return nil, EvalError(StateInvalidParameterValue, "field position must not be zero")
			}
			if s == "" {
				return "", nil
			}
			if sep != "" && n > 0 {
				// The n-th field without splitting the whole string.
				for ; n > 1; n-- {
					i := strings.Index(s, sep)
					if i < 0 {
						return "", nil
					}
					s = s[i+len(sep):]
				}
				if i := strings.Index(s, sep); i >= 0 {
					return s[:i], nil
				}
				return s, nil
			}
			var parts []string
			if sep == "" {
				parts = []string{s}
			} else {
				parts = strings.Split(s, sep)
			}
			if n < 0 {
				n = int64(len(parts)) + n + 1
				if n <= 0 {
					return "", nil
				}
			}
			if n > int64(len(parts)) {
				return "", nil
			}
			return parts[n-1], nil
		}),
		&Func{Name: "concat", Args: []types.Type{anyType}, Variadic: true, Result: types.TText, Volatility: Stable,
			Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
				var b strings.Builder
				for i, v := range a {
					if v != nil {
						text := outputText(env, ts[i], v)
						if err := CheckTextGrowth(b.Len(), len(text)); err != nil {
							return nil, err
						}
						b.WriteString(text)
					}
				}
				return b.String(), nil
			}},
		&Func{Name: "concat_ws", Args: []types.Type{types.TText, anyType}, Variadic: true, Result: types.TText, Volatility: Stable,
			Eval: func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
				if a[0] == nil {
					return nil, nil
				}
				sep := a[0].(string)
				var b strings.Builder
				first := true
				for i, v := range a[1:] {
					if v == nil {
						continue
					}
					text := outputText(env, ts[i+1], v)
					if !first {
						text = sep + text
					}
					first = false
					if err := CheckTextGrowth(b.Len(), len(text)); err != nil {
						return nil, err
					}
					b.WriteString(text)
				}
				return b.String(), nil
			}},
		f2("encode", types.TBytea, types.TText, types.TText, func(a, b types.Datum) (types.Datum, error) {
			switch strings.ToLower(b.(string)) {
			case "hex":
				return hex.EncodeToString(a.([]byte)), nil
			case "base64":
				return base64.StdEncoding.EncodeToString(a.([]byte)), nil
			}
			return nil, EvalError(StateInvalidParameterValue, "unrecognized encoding: \"%s\"", b.(string))
		}),
		f2("decode", types.TText, types.TText, types.TBytea, func(a, b types.Datum) (types.Datum, error) {
			switch strings.ToLower(b.(string)) {
			case "hex":
				out, err := hex.DecodeString(a.(string))
				if err != nil {
					return nil, EvalError(StateInvalidParameterValue, "invalid hexadecimal data")
				}
				return out, nil
			case "base64":
				out, err := base64.StdEncoding.DecodeString(a.(string))
				if err != nil {
					return nil, EvalError(StateInvalidParameterValue, "invalid base64 data")
				}
				return out, nil
			}
			return nil, EvalError(StateInvalidParameterValue, "unrecognized encoding: \"%s\"", b.(string))
		}),
	)
	for _, t := range []types.Type{types.TInt8, types.TInt4} {
		bits := intBits(t.Kind)
		add(f1("to_hex", t, types.TText, func(a types.Datum) (types.Datum, error) {
			v := a.(int64)
			if bits == 32 {
				return strconv.FormatUint(uint64(uint32(v)), 16), nil
			}
			return strconv.FormatUint(uint64(v), 16), nil
		}))
	}
}

func strpos(s, sub string) int64 {
	i := strings.Index(s, sub)
	if i < 0 {
		return 0
	}
	return runeLen(s[:i]) + 1
}
