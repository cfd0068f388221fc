-- q13: bounded side input join. Flink's lookup join (side_input FOR SYSTEM_TIME AS OF PROCTIME()) is a
-- plain join on the side_input table (SideInput in copy.go): it is loaded before the bids and never
-- changes, so both give these rows (a later change to side_input would update past rows here).
CREATE MATERIALIZED VIEW q13 AS SELECT b.auction, b.bidder, b.price, b.date_time, s.value FROM bid b JOIN side_input s ON mod(b.auction, 10000) = s.key
