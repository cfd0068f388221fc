-- q11: user sessions. Bids per bidder per SESSION window with a 10-second gap (Flink's
-- SESSION(bid, date_time, 10 s) grouped by bidder): SESSION(…) in FROM adds window_start/window_end.
CREATE MATERIALIZED VIEW q11 AS SELECT bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime FROM SESSION(bid, date_time, bidder, interval '10 seconds') GROUP BY bidder, window_start, window_end
