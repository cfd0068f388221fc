package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/rockstream/rockstream/errcode"
)

// subscriptionsMax bounds the SUBSCRIBE streams the console keeps open at
// once (each holds a session and a subscription of the view shard): a
// page left open in many tabs must not take every connection slot. One
// more answers a failure event saying so.
const subscriptionsMax = 16

// Events of the stream (text/event-stream, data is JSON):
//
//	columns   {"columns": [...]}                 first, and again after a reconnect
//	change    {"epoch": e, "diff": d, "row": [...]}  d copies of row inserted (d < 0: deleted)
//	progress  {"epoch": e}                         every change up to epoch e has been sent
//	failure   {error}                              the stream ended with this error
//
// The first changes are the snapshot (SUBSCRIBE ... WITH (SNAPSHOT)), so
// the page can show the view's rows and keep them current.
type changeEvent struct {
	Epoch string    `json:"epoch"`
	Diff  int64     `json:"diff"`
	Row   []*string `json:"row"`
}

func (c *console) subscribe(w http.ResponseWriter, r *http.Request) {
	view := r.FormValue("view")
	if view == "" {
		refuse(w, r, http.StatusBadRequest, errcode.New(errcode.ConsoleBadRequest, "no view named: use /console/api/subscribe?view=<materialized view>"))
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		refuse(w, r, http.StatusInternalServerError, errcode.New(errcode.ConsoleUnavailable, "the HTTP connection cannot stream"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) bool {
		payload, err := json.Marshal(data)
		if err != nil {
			panic(err) // the events are plain structs of strings and numbers
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, payload); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	// NB: failures are events, not HTTP statuses: EventSource reports no
	// body for a failed response, and reconnects after a closed stream
	// unless the page closes it on a failure event.
	select {
	case c.subscriptions <- struct{}{}:
		defer func() { <-c.subscriptions }()
	default:
		send("failure", describeError(errcode.New(errcode.ConsoleUnavailable, "the console streams at most %d subscriptions at once; close other view pages", subscriptionsMax)))
		return
	}
	ctx := r.Context()
	conn, err := c.connect(ctx, r, database(r), nil)
	if err != nil {
		send("failure", describeError(err))
		return
	}
	defer conn.Close(context.Background())
	streamCtx, stop := context.WithCancel(ctx)
	results := conn.Exec(streamCtx, "SUBSCRIBE "+quoteIdent(view)+" WITH (SNAPSHOT)")
	defer results.Close()
	// NB: runs before results.Close: a SUBSCRIBE never completes, so
	// reading the rest of its result would wait forever when the page's
	// end failed a write before the request's context ended.
	defer stop()
	if !results.NextResult() {
		if err := results.Close(); err != nil {
			send("failure", describeError(err))
		}
		return
	}
	rr := results.ResultReader()
	fields := rr.FieldDescriptions()
	// Every row is (mz_timestamp, mz_progressed, mz_diff, <view columns>).
	const metaColumns = 3
	if len(fields) < metaColumns {
		send("failure", describeError(errcode.New(errcode.ConsoleUnavailable, "SUBSCRIBE answered %d columns, fewer than its own three", len(fields))))
		return
	}
	columns := make([]string, 0, len(fields)-metaColumns)
	for _, f := range fields[metaColumns:] {
		columns = append(columns, f.Name)
	}
	if !send("columns", map[string][]string{"columns": columns}) {
		return
	}
	for rr.NextRow() {
		values := rr.Values()
		epoch := string(values[0])
		if string(values[1]) == "t" {
			if !send("progress", map[string]string{"epoch": epoch}) {
				return
			}
			continue
		}
		change := changeEvent{Epoch: epoch, Row: make([]*string, 0, len(values)-metaColumns)}
		if n := optionalInteger(ptr(string(values[2]))); n != nil {
			change.Diff = *n
		}
		for _, v := range values[metaColumns:] {
			if v == nil {
				change.Row = append(change.Row, nil)
				continue
			}
			change.Row = append(change.Row, ptr(string(v)))
		}
		if !send("change", change) {
			return
		}
	}
	if _, err := rr.Close(); err != nil && ctx.Err() == nil {
		send("failure", describeError(err))
	}
}

func ptr(s string) *string { return &s }
