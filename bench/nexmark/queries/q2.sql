-- q2: selection (stateless).
CREATE MATERIALIZED VIEW q2 AS SELECT auction, price FROM bid WHERE auction % 123 = 0
