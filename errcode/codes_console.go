package errcode

// Console codes: the web console on the HTTP port (package console). They
// live at the top of the gateway expansion range, RS-2490–2499.
var (
	ConsoleUnavailable = Register("RS-2490", "console.session_unavailable", "57P03",
		"Wait until the server is ready (GET /readyz answers ready) and reload the page; the console's sessions connect to the server's own pgwire listener.")
	ConsoleCrossOrigin = Register("RS-2491", "console.cross_origin_request", "42501",
		"Open the console itself (http://127.0.0.1:<http port>/) and use its SQL box; pages of other sites may not run statements or read changes through it.")
	ConsoleBadRequest = Register("RS-2492", "console.bad_request", "22023",
		"Send a JSON body {\"sql\": \"...\"} to /console/api/sql, or name a materialized view with ?view= (or ?name=) on the view page and the subscribe stream.")
	ConsoleStatementRefused = Register("RS-2493", "console.statement_refused", "0A000",
		"Run COPY and SUBSCRIBE from psql; to watch a view's changes in the console, open the view's page, which subscribes to it.")
)
