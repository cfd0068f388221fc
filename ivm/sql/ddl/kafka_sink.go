package ddl

import (
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
)

// CreateSink is CREATE SINK name FROM view INTO KAFKA | POSTGRES (...):
// a materialized view's changes, epoch by epoch, written to a Kafka topic
// or a PostgreSQL table in one downstream transaction per batch of closed
// epochs. This package does no I/O: the view is resolved and the
// downstream system reached by package engine.
//
//	CREATE SINK orders_out FROM per_item
//	  INTO KAFKA (brokers = 'k1:9092', topic = 'per-item', format = 'upsert', key = 'item')
//	CREATE SINK orders_pg FROM per_item
//	  INTO POSTGRES (connection = 'postgres://u@host/db', table = 'per_item', mode = 'upsert', key = 'item')
type CreateSink struct {
	Name string
	// View names the materialized view as written (catalog.Qualify).
	View string
	// Exactly one of Kafka and Postgres is set.
	Kafka    *KafkaSink
	Postgres *PostgresSink
}

// Key is the sink's key columns (nil: none).
func (c *CreateSink) Key() []string {
	if c.Postgres != nil {
		return c.Postgres.Key
	}
	return c.Kafka.Key
}

// Kind is the sink's kind as rockstream_catalog.sinks shows it.
func (c *CreateSink) Kind() string {
	if c.Postgres != nil {
		return "postgres"
	}
	return "kafka"
}

func (*CreateSink) ddl() {}

// KafkaSink is the INTO KAFKA part of CREATE SINK.
type KafkaSink struct {
	// Brokers are the bootstrap brokers, host:port each.
	Brokers []string
	Topic   string
	// Format is KafkaSinkUpsert or KafkaSinkDebezium.
	Format string
	// Key names the view's columns that identify a row (required for
	// upsert; a debezium sink without one writes records without a key).
	Key []string
}

// Formats of a KAFKA sink.
const (
	// KafkaSinkUpsert: key = the key columns as a JSON object, value =
	// the row as a JSON object; a deleted key is a tombstone (no value).
	KafkaSinkUpsert = "upsert"
	// KafkaSinkDebezium: value = {"before": row|null, "after": row|null,
	// "op": "c"|"u"|"d"}, Debezium's change envelope without its schema.
	KafkaSinkDebezium = "debezium"
)

func createSink(cs *parse.CreateSink) (*CreateSink, error) {
	unsupported := func(format string, args ...any) error {
		return errcode.New(errcode.ConnectorOptionUnsupported, format, args...)
	}
	name, view := cs.Name, cs.From
	if len(name) == 2 && name[0] == "public" {
		name = name[1:]
	}
	if len(name) != 1 {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support sinks in a schema other than public: %s", strings.Join(name, "."))
	}
	if len(view) > 2 {
		return nil, crossDatabase(strings.Join(view, "."))
	}
	out := &CreateSink{Name: name[0], View: view[len(view)-1]}
	if len(view) == 2 {
		out.View = catalog.Qualify(view[0], view[1])
	}
	if cs.Postgres != nil {
		ps, err := postgresSink(cs.Postgres)
		if err != nil {
			return nil, err
		}
		out.Postgres = ps
		return out, nil
	}
	ks := &KafkaSink{}
	seen := map[string]bool{}
	for _, o := range cs.Kafka {
		if seen[o.Key] {
			return nil, unsupported("KAFKA sink option %s given twice", o.Key)
		}
		seen[o.Key] = true
		if !o.Value.IsString {
			return nil, unsupported("KAFKA sink option %s must be a string, got %s", o.Key, o.Value.Text)
		}
		switch o.Key {
		case "brokers":
			ks.Brokers = kafkaBrokers(o.Value.Text)
		case "topic":
			ks.Topic = o.Value.Text
		case "format":
			switch f := strings.ToLower(o.Value.Text); f {
			case KafkaSinkUpsert, KafkaSinkDebezium:
				ks.Format = f
			default:
				return nil, unsupported("KAFKA sink option format = '%s' is not supported; use 'upsert' or 'debezium'", o.Value.Text)
			}
		case "key":
			key, err := sinkKeyOption("KAFKA", o.Value.Text)
			if err != nil {
				return nil, err
			}
			ks.Key = key
		default:
			return nil, unsupported("KAFKA sink option %s is not supported (have brokers, topic, format, key)", o.Key)
		}
	}
	switch {
	case len(ks.Brokers) == 0:
		return nil, unsupported("CREATE SINK ... INTO KAFKA needs option brokers = 'host:port[,host:port...]'")
	case ks.Topic == "":
		return nil, unsupported("CREATE SINK ... INTO KAFKA needs option topic = '<topic name>'")
	case ks.Format == "":
		return nil, unsupported("CREATE SINK ... INTO KAFKA needs option format = 'upsert' or 'debezium'")
	case ks.Format == KafkaSinkUpsert && len(ks.Key) == 0:
		return nil, unsupported("a KAFKA sink with format 'upsert' needs option key = '<the view's key columns>'")
	}
	out.Kafka = ks
	return out, nil
}

// sinkKeyOption parses a sink's key option: comma-separated column names.
func sinkKeyOption(kind, text string) ([]string, error) {
	var key []string
	for _, k := range strings.Split(text, ",") {
		k = strings.TrimSpace(k)
		for _, prev := range key {
			if prev == k {
				return nil, errcode.New(errcode.ConnectorOptionUnsupported, "%s sink option key names column \"%s\" twice", kind, k)
			}
		}
		if k == "" {
			return nil, errcode.New(errcode.ConnectorOptionUnsupported, "%s sink option key has an empty column name", kind)
		}
		key = append(key, k)
	}
	return key, nil
}
