-- Query2: Selection
-- Find bids with specific auction ids and show their bid price.
-- To make it more interesting we choose bids for every 123'th auction.

CREATE TABLE nexmark_q2 (
  auction  BIGINT,
  price  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
