// Package console is the web console served at / on the HTTP port
// (`rockstream start --http`): a page listing every table, materialized
// view and source with its rows, state bytes and freshness lag, and the
// long work running (a view being filled, a COPY) with a bar; a SQL box
// whose statements run in a real session; and a page per view with its
// dataflow (its operators with their rows, time and state, kept current),
// its plan (EXPLAIN INCREMENTAL) and its changes streamed live (SUBSCRIBE
// over server-sent events).
//
// The console is a pgwire client of its own server: a page or stream opens
// a session on the pgwire listener with the request's credentials (HTTP
// basic authentication under --auth=password, the trusted superuser
// otherwise), and a tab's SQL box keeps one across its statements
// (sessions.go),
// so it sees exactly what psql would, roles and GRANTs included, and needs
// no engine internals. The object list is read from rockstream_catalog
// (the data SHOW VIEW STATUS shows), the progress of long work from
// rockstream_catalog.progress, and a view's operator numbers from EXPLAIN
// ANALYZE INCREMENTAL: the console shows what the engine reports and
// computes none of it.
//
// Walkthrough of a request:
//
//	GET  /                          overview.go: catalog queries, page rendered with html/template
//	POST /console/api/sql           sql.go: {"sql": "..."} runs in the tab's session; JSON result or error
//	GET  /console/view?name=v       view.go: status, definition, dataflow, EXPLAIN INCREMENTAL
//	GET  /console/part/progress?db=&view=
//	                                progress.go: the "Running now" part (rockstream_catalog.progress),
//	                                reloaded by the page every second
//	GET  /console/part/dataflow?view=v
//	                                dataflow.go: a view's operators with their numbers
//	                                (EXPLAIN ANALYZE INCREMENTAL), reloaded every two seconds
//	GET  /console/api/subscribe?view=v
//	                                subscribe.go: SUBSCRIBE v WITH (SNAPSHOT) as text/event-stream
//	GET  /console/assets/...        the embedded script and style sheet (no build step)
//
// Guards (guard.go): the engine mounts the console only on a loopback
// listener or when connections authenticate; under trust authentication
// the Host header must name a loopback address (a DNS-rebinding page
// cannot reach it), and state-changing, streaming or reloaded-part
// requests from another origin are refused, so that a web page open in the same browser cannot
// run SQL through it.
package console
