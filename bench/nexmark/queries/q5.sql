-- q5: hot items. HOP(bid, date_time, slide 2 s, size 10 s) written for PostgreSQL: each bid joins the
-- 5 windows holding it (window_start = date_bin(slide) - k·slide, k < size/slide); count per auction and
-- window, keep the auctions whose count reaches the window's maximum.
CREATE MATERIALIZED VIEW q5 AS WITH hop AS (SELECT b.auction, date_bin('2 seconds', b.date_time, '1970-01-01') - w.k * interval '2 seconds' AS starttime FROM bid b CROSS JOIN (VALUES (0), (1), (2), (3), (4)) AS w(k)), counts AS (SELECT auction, count(*) AS num, starttime FROM hop GROUP BY auction, starttime) SELECT c.auction, c.num FROM counts c JOIN (SELECT max(num) AS maxn, starttime FROM counts GROUP BY starttime) m ON c.starttime = m.starttime AND c.num >= m.maxn
