package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
)

// bundleRequestTimeout bounds each request of a support bundle: a sick
// server is when a bundle matters, so one part that hangs must not stop
// the others from being collected.
const bundleRequestTimeout = 30 * time.Second

// newDebugBundleCommand is `rockstream debug bundle`: it collects what
// support needs from a running server into one .tar.gz — its settings,
// catalog, view and source status, operator statistics, metrics and
// recent log lines — and no table or view rows.
func newDebugBundleCommand() *cobra.Command {
	var pgURL, httpAddr, out string
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Write a support bundle (settings, catalog, status, metrics, recent logs; no row data) of a running server",
		Long: "Collect a running server's configuration (/debug/config), settings (pg_settings), catalog and status " +
			"(rockstream_catalog.*, SHOW VIEW STATUS, EXPLAIN and EXPLAIN ANALYZE INCREMENTAL of every materialized view), " +
			"sessions without their query text, /metrics and its last log lines (/debug/logs) into one .tar.gz. " +
			"No table or view rows are read. A part that cannot be collected is written as <part>.error and the rest " +
			"goes on. The HTTP parts need the server's --http port on a loopback address or --auth=password (the " +
			"credentials in --url are used).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				out = "rockstream-bundle-" + time.Now().UTC().Format("20060102T150405Z") + ".tar.gz"
			}
			parts, err := collectBundle(cmd.Context(), pgURL, httpAddr)
			if err != nil {
				return err
			}
			if err := writeBundle(out, parts); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Support bundle written to %s (%d parts)\n", out, len(parts))
			return nil
		},
	}
	cmd.Flags().StringVar(&pgURL, "url", envOr("ROCKSTREAM_URL", "postgres://rockstream@"+engine.DefaultListen+"/default"), "server connection URL")
	cmd.Flags().StringVar(&httpAddr, "http", envOr("ROCKSTREAM_HTTP", engine.DefaultHTTP), "the server's HTTP address (metrics, config, logs)")
	cmd.Flags().StringVar(&out, "out", "", "bundle file to write (default rockstream-bundle-<UTC time>.tar.gz)")
	return cmd
}

// bundlePart is one file of a bundle.
type bundlePart struct {
	name string
	data []byte
}

// bundleQueries are the SQL parts: catalog, status and sessions, never
// rows of tables or views (pg_stat_activity's query text is left out:
// statements carry values).
var bundleQueries = []struct{ name, sql string }{
	{"settings.tsv", "SELECT name, setting FROM pg_settings ORDER BY name"},
	{"catalog/tables.tsv", "SELECT * FROM rockstream_catalog.tables ORDER BY name"},
	{"catalog/views.tsv", "SELECT * FROM rockstream_catalog.views ORDER BY name"},
	{"catalog/sources.tsv", "SELECT * FROM rockstream_catalog.sources ORDER BY name"},
	{"catalog/sinks.tsv", "SELECT * FROM rockstream_catalog.sinks ORDER BY name"},
	{"status/views.tsv", "SHOW VIEW STATUS"},
	{"status/progress.tsv", "SELECT * FROM rockstream_catalog.progress"},
	{"status/sessions.tsv", "SELECT pid, usename, datname, application_name, backend_start, xact_start, query_start, state, wait_event_type, wait_event FROM pg_stat_activity ORDER BY pid"},
}

// collectBundle gathers every part; it fails only when the server can be
// reached neither over pgwire nor over HTTP.
func collectBundle(ctx context.Context, pgURL, httpAddr string) ([]bundlePart, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var parts []bundlePart
	add := func(name string, data []byte, err error) {
		if err != nil {
			parts = append(parts, bundlePart{name + ".error", []byte(err.Error() + "\n")})
			return
		}
		parts = append(parts, bundlePart{name, data})
	}
	reached := false
	connectCtx, cancel := context.WithTimeout(ctx, bundleRequestTimeout)
	conn, err := pgx.Connect(connectCtx, pgURL)
	cancel()
	if err != nil {
		add("sql", nil, fmt.Errorf("cannot connect to %s: %w", redactURL(pgURL), err))
	} else {
		reached = true
		defer conn.Close(context.Background())
		for _, q := range bundleQueries {
			text, err := queryTSV(ctx, conn, q.sql)
			add(q.name, []byte(text), err)
		}
		views, err := queryTSV(ctx, conn, "SELECT name FROM rockstream_catalog.views WHERE kind = 'materialized' ORDER BY name")
		if err == nil {
			for _, name := range strings.Split(strings.TrimSpace(views), "\n")[1:] {
				ident := pgx.Identifier{name}.Sanitize()
				plan, err := queryTSV(ctx, conn, "EXPLAIN INCREMENTAL VERBOSE "+ident)
				add("views/view-"+url.PathEscape(name)+"/explain.txt", []byte(plan), err)
				analyze, err := queryTSV(ctx, conn, "EXPLAIN ANALYZE INCREMENTAL "+ident)
				add("views/view-"+url.PathEscape(name)+"/explain_analyze.txt", []byte(analyze), err)
			}
		}
	}
	user, password := "", ""
	if u, err := url.Parse(pgURL); err == nil && u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	for _, p := range []struct{ name, path string }{{"config.json", "/debug/config"}, {"metrics.txt", "/metrics"}, {"logs.txt", "/debug/logs"}} {
		data, err := httpGet(ctx, "http://"+httpAddr+p.path, user, password)
		if err == nil {
			reached = true
		}
		add(p.name, data, err)
	}
	if !reached {
		return nil, fmt.Errorf("cannot reach the server over pgwire (%s) nor HTTP (%s): is `rockstream start` running?", redactURL(pgURL), httpAddr)
	}
	manifest := fmt.Sprintf("RockStream support bundle\ncollected: %s\nserver: %s, http %s\nparts:\n", time.Now().UTC().Format(time.RFC3339), redactURL(pgURL), httpAddr)
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	sort.Strings(names)
	manifest += "  " + strings.Join(names, "\n  ") + "\n"
	return append([]bundlePart{{"MANIFEST.txt", []byte(manifest)}}, parts...), nil
}

// queryTSV runs one statement and returns its columns and rows as
// tab-separated lines (NULL for nulls).
func queryTSV(ctx context.Context, conn *pgx.Conn, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, bundleRequestTimeout)
	defer cancel()
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range results {
		names := make([]string, len(r.FieldDescriptions))
		for i, f := range r.FieldDescriptions {
			names[i] = f.Name
		}
		b.WriteString(strings.Join(names, "\t") + "\n")
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					cells[i] = "NULL"
				} else {
					cells[i] = strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(string(v))
				}
			}
			b.WriteString(strings.Join(cells, "\t") + "\n")
		}
	}
	return b.String(), nil
}

// httpGet fetches one HTTP part, with basic credentials when given.
func httpGet(ctx context.Context, target, user, password string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, bundleRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", target, nil)
	if err != nil {
		return nil, err
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// redactURL hides a connection URL's password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// writeBundle writes parts as a gzipped tar under a rockstream-bundle/
// directory.
func writeBundle(path string, parts []bundlePart) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("cannot write the bundle: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	now := time.Now()
	for _, p := range parts {
		if err := tw.WriteHeader(&tar.Header{Name: "rockstream-bundle/" + p.name, Mode: 0o600, Size: int64(len(p.data)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(p.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
