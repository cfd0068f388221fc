// Package console is the web console served at / on the HTTP port
// (`rockstream start --http`): a page listing every table, materialized
// view and source with its rows, state bytes and freshness lag; a SQL box
// whose statements run in a real session; and a page per view with its
// dataflow (EXPLAIN INCREMENTAL) and its changes streamed live (SUBSCRIBE
// over server-sent events).
//
// The console is a pgwire client of its own server: a page or stream opens
// a session on the pgwire listener with the request's credentials (HTTP
// basic authentication under --auth=password, the trusted superuser
// otherwise), and a tab's SQL box keeps one across its statements
// (sessions.go),
// so it sees exactly what psql would, roles and GRANTs included, and needs
// no engine internals. The object list is read from rockstream_catalog
// (the data SHOW VIEW STATUS shows).
//
// Walkthrough of a request:
//
//	GET  /                          overview.go: catalog queries, page rendered with html/template
//	POST /console/api/sql           sql.go: {"sql": "..."} runs in the tab's session; JSON result or error
//	GET  /console/view?name=v       view.go: status, definition, EXPLAIN INCREMENTAL
//	GET  /console/api/subscribe?view=v
//	                                subscribe.go: SUBSCRIBE v WITH (SNAPSHOT) as text/event-stream
//	GET  /console/assets/...        the embedded script and style sheet (no build step)
//
// Guards (guard.go): the engine mounts the console only on a loopback
// listener or when connections authenticate; under trust authentication
// the Host header must name a loopback address (a DNS-rebinding page
// cannot reach it), and state-changing or streaming requests from another
// origin are refused, so that a web page open in the same browser cannot
// run SQL through it.
package console
