package ddl

import (
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// KafkaSource is CREATE SOURCE name (columns) FROM KAFKA (...): the
// records of a Kafka topic, decoded into the declared columns. This
// package does no I/O: the topic is first read when the source starts.
//
//	CREATE SOURCE orders (id bigint, item text, qty int)
//	  FROM KAFKA (brokers = 'k1:9092,k2:9092', topic = 'orders', format = 'json', key = 'id')
//	CREATE SOURCE lines FROM KAFKA (brokers = 'k1:9092', topic = 'logs', format = 'text')
//
// With a key the source keeps the newest record per key (upsert; a
// record without a value deletes its key); without one every record is
// a row (append).
type KafkaSource struct {
	// Brokers are the bootstrap brokers, host:port each.
	Brokers []string
	Topic   string
	// Format is how a record's value is decoded: KafkaFormatJSON,
	// KafkaFormatCSV or KafkaFormatText.
	Format string
	// Columns are the declared columns (format text without columns has
	// one, value text).
	Columns []catalog.Column
	// Key lists the indexes in Columns of the key columns (upsert); nil
	// appends every record.
	Key []int
}

// Formats of a KAFKA source.
const (
	// KafkaFormatJSON: a value is a JSON object; columns are read by name
	// (a missing field is NULL, other fields are ignored).
	KafkaFormatJSON = "json"
	// KafkaFormatCSV: a value is one CSV line with one field per column
	// in order (an unquoted empty field is NULL, as COPY ... CSV reads it).
	KafkaFormatCSV = "csv"
	// KafkaFormatText: a value is the text form of the source's only
	// column.
	KafkaFormatText = "text"
)

// KafkaErrorsSuffix names the dead-letter relation of a KAFKA source:
// source name + suffix.
const KafkaErrorsSuffix = "_errors"

// kafkaBrokers splits a brokers option ('host:port[,host:port...]'),
// spaces and empty entries dropped.
func kafkaBrokers(text string) []string {
	var out []string
	for _, b := range strings.Split(text, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

func kafkaSource(cs *parse.CreateSource, out *CreateSource) error {
	bad := func(format string, args ...any) error {
		return errcode.New(errcode.SQLInvalidParameterValue, format, args...)
	}
	ks := &KafkaSource{Format: KafkaFormatJSON}
	seen := map[string]bool{}
	var key string
	for _, o := range cs.Kafka {
		if seen[o.Key] {
			return bad("KAFKA option %s given twice", o.Key)
		}
		seen[o.Key] = true
		if !o.Value.IsString {
			return bad("KAFKA option %s must be a string, got %s", o.Key, o.Value.Text)
		}
		switch o.Key {
		case "brokers":
			ks.Brokers = kafkaBrokers(o.Value.Text)
		case "topic":
			ks.Topic = o.Value.Text
		case "format":
			switch f := strings.ToLower(o.Value.Text); f {
			case KafkaFormatJSON, KafkaFormatCSV, KafkaFormatText:
				ks.Format = f
			default:
				return bad("KAFKA option format must be 'json', 'csv' or 'text', got %q", o.Value.Text)
			}
		case "key":
			key = o.Value.Text
		default:
			return bad("unknown KAFKA option %s (have brokers, topic, format, key)", o.Key)
		}
	}
	if len(ks.Brokers) == 0 {
		return bad("CREATE SOURCE ... FROM KAFKA needs brokers = 'host:port[,host:port...]'")
	}
	if ks.Topic == "" {
		return bad("CREATE SOURCE ... FROM KAFKA needs topic = '<topic name>'")
	}
	for _, c := range cs.Columns {
		t, err := sourceColumnType(c.Name, c.TypeSQL)
		if err != nil {
			return err
		}
		for _, prev := range ks.Columns {
			if prev.Name == c.Name {
				return errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" specified more than once", c.Name)
			}
		}
		ks.Columns = append(ks.Columns, catalog.Column{Name: c.Name, Type: t})
	}
	switch {
	case ks.Format == KafkaFormatText && len(ks.Columns) == 0:
		ks.Columns = []catalog.Column{{Name: "value", Type: types.TText}}
	case ks.Format == KafkaFormatText && len(ks.Columns) != 1:
		return bad("a KAFKA source with format 'text' has one column, not %d", len(ks.Columns))
	case len(ks.Columns) == 0:
		return errcode.New(errcode.SQLSyntaxError, "a KAFKA source with format '%s' declares its columns: CREATE SOURCE %s (column type, ...) FROM KAFKA (...)", ks.Format, out.Name)
	}
	if key != "" {
		for _, k := range strings.Split(key, ",") {
			k = strings.TrimSpace(k)
			at := -1
			for i, c := range ks.Columns {
				if c.Name == k {
					at = i
				}
			}
			if at < 0 {
				return errcode.New(errcode.SQLUndefinedColumn, "KAFKA option key names column \"%s\", which the source does not declare", k)
			}
			for _, prev := range ks.Key {
				if prev == at {
					return bad("KAFKA option key names column \"%s\" twice", k)
				}
			}
			ks.Key = append(ks.Key, at)
			ks.Columns[at].NotNull = true
		}
	}
	out.Kafka = ks
	return nil
}
