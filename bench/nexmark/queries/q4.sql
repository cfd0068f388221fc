-- q4: average price for a category (join, max per auction, avg per category).
CREATE MATERIALIZED VIEW q4 AS SELECT q.category, avg(q.final) AS avg_final FROM (SELECT max(b.price) AS final, a.category FROM auction a JOIN bid b ON a.id = b.auction WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.category) q GROUP BY q.category
