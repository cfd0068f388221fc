-- q11: user sessions. Bids per bidder per SESSION window with a 10-second gap (Flink's
-- SESSION(bid, date_time, 10 s) grouped by bidder): SESSION(…) in FROM adds window_start/window_end.
-- SESSION windows never close (not even at a watermark: its state keeps every bid), so the view
-- opts in with WITH (windows = 'never_close'); without it CREATE fails with RS-1005.
CREATE MATERIALIZED VIEW q11 WITH (windows = 'never_close') AS SELECT bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime FROM SESSION(bid, date_time, bidder, interval '10 seconds') GROUP BY bidder, window_start, window_end
