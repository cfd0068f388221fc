-- q18: last bid per bidder and auction (ROW_NUMBER() = 1 written as DISTINCT ON).
CREATE MATERIALIZED VIEW q18 AS SELECT DISTINCT ON (bidder, auction) auction, bidder, price, channel, url, date_time, extra FROM bid ORDER BY bidder, auction, date_time DESC
