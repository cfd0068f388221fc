-- q0: pass-through (stateless).
CREATE MATERIALIZED VIEW q0 AS SELECT auction, bidder, price, date_time, extra FROM bid
