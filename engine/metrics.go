package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rockstream/rockstream/connect/pgcdc"
)

// collector exports the engine's numbers to Prometheus at scrape time, so
// nothing is computed between scrapes.
type collector struct {
	engine func() *Engine

	commits, commitErrors, queries, rowsWritten  *prometheus.Desc
	frontier, lastEpoch, epochSteps, stepSeconds *prometheus.Desc
	viewRebuilds                                 *prometheus.Desc
	viewRows, viewStateBytes, viewLag            *prometheus.Desc
	viewStateRows, viewLagSeconds                *prometheus.Desc
	viewTarget, viewTargetMet, viewTargetMissed  *prometheus.Desc
	sourceRows, sourceErrors, sourceLag          *prometheus.Desc
	sourceBlocked                                *prometheus.Desc
	sourceLagRecords, sourceBadRecords           *prometheus.Desc
	shardEpoch, exchangeUnacked, exchangeFrames  *prometheus.Desc
	sinkRows, sinkErrors, sinkEpoch, sinkLag     *prometheus.Desc
	tableWatermark, tableLateRows                *prometheus.Desc
	actorBusy, actorStore                        *prometheus.Desc
	exchangeBytes, exchangeCredit, exchangeTaken *prometheus.Desc
}

func newCollector(engine func() *Engine) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("rockstream_"+name, help, labels, nil)
	}
	return &collector{
		engine:           engine,
		commits:          d("commits_total", "Committed write transactions."),
		commitErrors:     d("commit_errors_total", "Failed commits."),
		queries:          d("queries_total", "Ad-hoc queries run."),
		rowsWritten:      d("rows_written_total", "Row writes committed."),
		frontier:         d("shard_frontier_epoch", "Last source epoch applied to views."),
		lastEpoch:        d("shard_last_epoch", "Last source epoch committed."),
		epochSteps:       d("shard_epoch_steps_total", "Epoch maintenance steps."),
		stepSeconds:      d("shard_last_step_seconds", "Duration of the last epoch step."),
		viewRebuilds:     d("view_rebuilds_total", "Views rebuilt from their inputs at startup because their stored state was written in another format (see the log for which)."),
		viewRows:         d("view_rows", "Rows in a materialized view.", "view"),
		viewStateBytes:   d("view_state_bytes", "Operator state bytes of a view.", "view"),
		viewLag:          d("view_freshness_lag_epochs", "Committed epochs not yet reflected in the view.", "view"),
		viewStateRows:    d("view_state_rows", "Operator state rows (keys) of a view.", "view"),
		viewLagSeconds:   d("view_freshness_lag_seconds", "How long the oldest commit not yet reflected in the view has waited (0: the view reflects every commit).", "view"),
		viewTarget:       d("view_freshness_target_seconds", "A view's freshness_target (only views that have one).", "view"),
		viewTargetMet:    d("view_freshness_target_met", "1 when a view with a freshness_target meets it, 0 when it misses it.", "view"),
		viewTargetMissed: d("view_freshness_missed", "1 for a view missing its freshness_target, labelled with why: backfilling, failed, error, recovering, behind inputs, overloaded.", "view", "reason"),
		sourceRows:       d("source_rows_total", "Row changes a POSTGRES or KAFKA source committed since the process started.", "source"),
		sourceErrors:     d("source_errors_total", "Failed attempts of a POSTGRES or KAFKA source (each retried).", "source"),
		sourceLag:        d("source_lag_bytes", "Bytes of upstream WAL a POSTGRES source has not committed yet.", "source"),
		sourceBlocked:    d("source_blocked", "1 when a POSTGRES source is BLOCKED by an incompatible upstream change (rockstream_catalog.sources says why).", "source"),
		sourceLagRecords: d("source_lag_records", "Records a KAFKA source's brokers hold past its committed offsets.", "source"),
		shardEpoch:       d("shard_epoch", "Each shard's epochs: last (committed or received), durable, and frontier (applied to its views).", "shard", "epoch"),
		exchangeUnacked:  d("exchange_unacked_epochs", "Durable epochs of the table shard that a view shard has not acknowledged yet (the exchange's backlog, kept in the table shard's log).", "from", "to"),
		exchangeFrames:   d("exchange_frames_in_flight", "Exchange frames sent and not acknowledged (bounded by the credit).", "from", "to"),
		sourceBadRecords: d("source_bad_records_total", "Records a KAFKA source could not decode and kept in its dead-letter relation, since the process started.", "source"),
		sinkRows:         d("sink_rows_total", "Rows (PostgreSQL) or records (Kafka) a sink delivered since the process started.", "sink"),
		sinkErrors:       d("sink_errors_total", "Failed sessions of a sink since the process started (each retried).", "sink"),
		sinkEpoch:        d("sink_delivered_epoch", "The last epoch a sink delivered (0: none yet).", "sink"),
		sinkLag:          d("sink_lag_epochs", "Epochs a sink's view is past the sink's last delivered one.", "sink"),
		tableWatermark:   d("table_watermark_seconds", "A table's event-time watermark (WITH (watermark = ...)), as seconds since the Unix epoch (only tables that have one, once a row came).", "table"),
		tableLateRows:    d("table_late_rows_total", "Rows inserted into a table with a watermark and dropped because their event time was behind it.", "table"),
		actorBusy:        d("actor_busy_seconds_total", "Wall time each actor spent handling messages (its storage calls included) since the process started: a shard busy for nearly all of a run is the bottleneck. Sessions, subscriptions and sources are summed by kind.", "actor"),
		exchangeBytes:    d("exchange_bytes_in_flight", "Bytes of delta-log entries in exchange frames sent and not acknowledged (the exchange's queue).", "from", "to"),
		exchangeCredit:   d("exchange_credit_frames", "Exchange frames the table shard may still send to a view shard before an acknowledgement (0: the view shard is behind and the rest waits in the table shard's log).", "from", "to"),
		exchangeTaken:    d("exchange_taken_bytes", "Bytes of delta-log entries a view shard took from the exchange and has not stepped over yet (held in memory).", "shard"),
		actorStore:       d("actor_store_seconds_total", "The part of rockstream_actor_busy_seconds_total each actor spent waiting on object-store calls (writing and syncing its WAL and SSTs, reading SSTs).", "actor"),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.commits, c.commitErrors, c.queries, c.rowsWritten, c.frontier, c.lastEpoch, c.epochSteps, c.stepSeconds, c.viewRebuilds, c.viewRows, c.viewStateBytes, c.viewLag, c.viewStateRows, c.viewLagSeconds, c.viewTarget, c.viewTargetMet, c.viewTargetMissed, c.sourceRows, c.sourceErrors, c.sourceLag, c.sourceBlocked, c.sourceLagRecords, c.sourceBadRecords, c.shardEpoch, c.exchangeUnacked, c.exchangeFrames, c.sinkRows, c.sinkErrors, c.sinkEpoch, c.sinkLag, c.tableWatermark, c.tableLateRows, c.actorBusy, c.actorStore, c.exchangeBytes, c.exchangeCredit, c.exchangeTaken} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	e := c.engine()
	if e == nil {
		return
	}
	m := e.Metrics()
	for _, b := range e.ActorBusy() {
		ch <- prometheus.MustNewConstMetric(c.actorBusy, prometheus.CounterValue, b.Busy.Seconds(), string(b.ID))
		ch <- prometheus.MustNewConstMetric(c.actorStore, prometheus.CounterValue, b.Store.Seconds(), string(b.ID))
	}
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(m.Commits.Load()))
	ch <- prometheus.MustNewConstMetric(c.commitErrors, prometheus.CounterValue, float64(m.CommitErrors.Load()))
	ch <- prometheus.MustNewConstMetric(c.queries, prometheus.CounterValue, float64(m.Queries.Load()))
	ch <- prometheus.MustNewConstMetric(c.rowsWritten, prometheus.CounterValue, float64(m.RowsWritten.Load()))
	for _, s := range e.SourceStatuses() {
		blocked := 0.0
		if s.State == pgcdc.StateBlocked {
			blocked = 1
		}
		ch <- prometheus.MustNewConstMetric(c.sourceRows, prometheus.CounterValue, float64(s.Rows), s.Name)
		ch <- prometheus.MustNewConstMetric(c.sourceErrors, prometheus.CounterValue, float64(s.Errors), s.Name)
		if s.Kafka {
			ch <- prometheus.MustNewConstMetric(c.sourceLagRecords, prometheus.GaugeValue, float64(s.LagRecords), s.Name)
			ch <- prometheus.MustNewConstMetric(c.sourceBadRecords, prometheus.CounterValue, float64(s.BadRecords), s.Name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.sourceLag, prometheus.GaugeValue, float64(s.Lag()), s.Name)
		ch <- prometheus.MustNewConstMetric(c.sourceBlocked, prometheus.GaugeValue, blocked, s.Name)
	}
	sinks := e.SinkStatuses()
	for _, s := range sinks {
		ch <- prometheus.MustNewConstMetric(c.sinkRows, prometheus.CounterValue, float64(s.Records), s.Name)
		ch <- prometheus.MustNewConstMetric(c.sinkErrors, prometheus.CounterValue, float64(s.Errors), s.Name)
		ch <- prometheus.MustNewConstMetric(c.sinkEpoch, prometheus.GaugeValue, float64(s.Epoch), s.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shards, err := e.ShardStatuses(ctx)
	if err != nil {
		return
	}
	for _, s := range shards {
		id := fmt.Sprint(s.Shard)
		ch <- prometheus.MustNewConstMetric(c.shardEpoch, prometheus.GaugeValue, float64(s.LastEpoch), id, "last")
		ch <- prometheus.MustNewConstMetric(c.shardEpoch, prometheus.GaugeValue, float64(s.DurableEpoch), id, "durable")
		ch <- prometheus.MustNewConstMetric(c.shardEpoch, prometheus.GaugeValue, float64(s.Frontier), id, "frontier")
		for _, w := range s.Watermarks {
			if w.Set {
				ch <- prometheus.MustNewConstMetric(c.tableWatermark, prometheus.GaugeValue, float64(w.Watermark)/1e6+pgEpochUnixSeconds, w.Name)
			}
			ch <- prometheus.MustNewConstMetric(c.tableLateRows, prometheus.CounterValue, float64(w.LateRows), w.Name)
		}
		ch <- prometheus.MustNewConstMetric(c.exchangeTaken, prometheus.GaugeValue, float64(s.ExchangeTakenBytes), id)
		for _, x := range s.Exchange {
			to := fmt.Sprint(x.Peer)
			ch <- prometheus.MustNewConstMetric(c.exchangeUnacked, prometheus.GaugeValue, float64(s.DurableEpoch-min(x.Acked, s.DurableEpoch)), id, to)
			ch <- prometheus.MustNewConstMetric(c.exchangeFrames, prometheus.GaugeValue, float64(x.InFlight), id, to)
			ch <- prometheus.MustNewConstMetric(c.exchangeBytes, prometheus.GaugeValue, float64(x.InFlightBytes), id, to)
			ch <- prometheus.MustNewConstMetric(c.exchangeCredit, prometheus.GaugeValue, float64(x.Credit), id, to)
		}
	}
	st, err := e.Status(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.frontier, prometheus.GaugeValue, float64(st.Frontier))
	ch <- prometheus.MustNewConstMetric(c.lastEpoch, prometheus.GaugeValue, float64(st.LastEpoch))
	ch <- prometheus.MustNewConstMetric(c.epochSteps, prometheus.CounterValue, float64(st.EpochSteps))
	ch <- prometheus.MustNewConstMetric(c.stepSeconds, prometheus.GaugeValue, float64(st.StepNanos)/1e9)
	ch <- prometheus.MustNewConstMetric(c.viewRebuilds, prometheus.CounterValue, float64(st.ViewRebuilds))
	snap, err := e.snapshot(ctx)
	if err != nil {
		return
	}
	for _, v := range st.Views {
		ch <- prometheus.MustNewConstMetric(c.viewRows, prometheus.GaugeValue, float64(v.Rows), v.Name)
		ch <- prometheus.MustNewConstMetric(c.viewStateRows, prometheus.GaugeValue, float64(v.StateRows), v.Name)
		ch <- prometheus.MustNewConstMetric(c.viewStateBytes, prometheus.GaugeValue, float64(v.StateBytes), v.Name)
		ch <- prometheus.MustNewConstMetric(c.viewLag, prometheus.GaugeValue, float64(st.LastEpoch-min(st.LastEpoch, v.Frontier)), v.Name)
		var target time.Duration
		if rel, ok := snap.RelationByID(v.View); ok {
			target = rel.FreshnessTarget
		}
		f := freshnessOf(v, target)
		if f.LagKnown {
			ch <- prometheus.MustNewConstMetric(c.viewLagSeconds, prometheus.GaugeValue, f.Lag.Seconds(), v.Name)
		}
		if target <= 0 {
			continue
		}
		met := 1.0
		if f.Missed != "" {
			met = 0
			ch <- prometheus.MustNewConstMetric(c.viewTargetMissed, prometheus.GaugeValue, 1, v.Name, f.Missed)
		}
		ch <- prometheus.MustNewConstMetric(c.viewTarget, prometheus.GaugeValue, target.Seconds(), v.Name)
		ch <- prometheus.MustNewConstMetric(c.viewTargetMet, prometheus.GaugeValue, met, v.Name)
	}
	for _, s := range sinks {
		for _, v := range st.Views {
			if v.View == s.View && s.Epoch != 0 {
				ch <- prometheus.MustNewConstMetric(c.sinkLag, prometheus.GaugeValue, float64(v.Frontier-min(v.Frontier, s.Epoch)), s.Name)
			}
		}
	}
}

// pgEpochUnixSeconds is 2000-01-01 (timestamptz's zero) in Unix seconds.
const pgEpochUnixSeconds = 946684800
