-- OVER aggregates: a moving sum and count over each user's last 10 of 5,000,000 generated orders (100,000 users), in event time (rows wait for the watermark).
CREATE TABLE orders (user_id INT, amount BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '100000', 'fields.amount.min' = '0', 'fields.amount.max' = '1000',
  'fields.ts.max-past' = '5s');
CREATE TABLE snk (user_id INT, amount BIGINT, s BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT user_id, amount,
  SUM(amount) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 9 PRECEDING AND CURRENT ROW),
  COUNT(*) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)
FROM orders;
