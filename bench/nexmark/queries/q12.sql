-- q12: bids per bidder per processing-time TUMBLE(p_time, 10 s) window. Flink's PROCTIME() is bid's p_time
-- column (ProcTime in copy.go): the time of the transaction that inserted the bid (ingestion time, as
-- RisingWave's PROCTIME() table column), so the windows follow COPY rounds, not event time.
CREATE MATERIALIZED VIEW q12 AS SELECT bidder, count(*) AS bid_count, date_bin('10 seconds', p_time, timestamptz '1970-01-01 00:00:00+00') AS starttime, date_bin('10 seconds', p_time, timestamptz '1970-01-01 00:00:00+00') + interval '10 seconds' AS endtime FROM bid GROUP BY bidder, 3, 4
