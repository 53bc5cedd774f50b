-- A Top-N over an updating aggregate (Flink's RetractStrategy): the three users who spent most, updated as their totals grow.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE spenders (user_id INT, total DECIMAL(38, 2), rn BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'spenders');
INSERT INTO spenders SELECT user_id, total, rn FROM (
  SELECT user_id, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn FROM (
    SELECT user_id, SUM(amount) AS total FROM orders GROUP BY user_id)) WHERE rn <= 3;
