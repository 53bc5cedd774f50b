-- A window aggregate over a window aggregate's output (the inner window's rows carry its
-- window_time, so the outer GROUP BY window_start, window_end is a window aggregate too), with
-- mini-batch on: rows the inner window emits are not late for the outer one, and rows late
-- for the inner window are dropped there once, not counted again.
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '100';
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE cascaded_out (window_start TIMESTAMP(3), window_end TIMESTAMP(3), max_per_product BIGINT, products BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'cascaded');
INSERT INTO cascaded_out SELECT window_start, window_end, MAX(n), COUNT(*)
  FROM (SELECT window_start, window_end, window_time, product, COUNT(*) AS n
        FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' SECOND, INTERVAL '45' SECOND))
        GROUP BY window_start, window_end, window_time, product)
  GROUP BY window_start, window_end;
