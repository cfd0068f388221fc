-- q20: expand bid with auction (join, filter on category).
CREATE MATERIALIZED VIEW q20 AS SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra, a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_date_time, a.expires, a.seller, a.category, a.extra AS auction_extra FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10
