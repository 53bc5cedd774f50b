-- OVER aggregates, more frames: ROWS UNBOUNDED with MIN/MAX/AVG, the default frame (RANGE UNBOUNDED, peers included), and a ROWS frame without partition.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE running_stats (id BIGINT, lo DECIMAL(10, 2), hi DECIMAL(10, 2), avg_qty INT) WITH ('connector' = 'print', 'print-identifier' = 'running');
CREATE TABLE peers (id BIGINT, n BIGINT, total DECIMAL(38, 2)) WITH ('connector' = 'print', 'print-identifier' = 'peers');
CREATE TABLE recent (id BIGINT, n BIGINT, qty_sum INT) WITH ('connector' = 'print', 'print-identifier' = 'recent');
EXECUTE STATEMENT SET BEGIN
INSERT INTO running_stats SELECT id, MIN(amount) OVER w, MAX(amount) OVER w, AVG(qty) OVER w FROM orders
WINDOW w AS (PARTITION BY user_id ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
INSERT INTO peers SELECT id, COUNT(*) OVER (PARTITION BY product ORDER BY ts), SUM(amount) OVER (PARTITION BY product ORDER BY ts) FROM orders;
INSERT INTO recent SELECT id, COUNT(*) OVER (ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW),
  SUM(qty) OVER (ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) FROM orders;
END;
