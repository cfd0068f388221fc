-- q1: currency conversion (stateless).
CREATE MATERIALIZED VIEW q1 AS SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid
