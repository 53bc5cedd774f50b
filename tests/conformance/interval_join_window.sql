-- Windows over an interval join: the join's rowtime stays a time attribute, so a TUMBLE window follows it (watermarks lag enough that no row is late).
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
CREATE TABLE w (window_start TIMESTAMP(3), window_end TIMESTAMP(3), pay_method STRING, n BIGINT, total DECIMAL(38, 2))
WITH ('connector' = 'print', 'print-identifier' = 'ijw');
CREATE VIEW joined AS
  SELECT o.id, o.ts, p.pay_method, p.paid FROM orders o JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts - INTERVAL '1' SECOND AND o.ts + INTERVAL '10' SECOND;
INSERT INTO w
SELECT window_start, window_end, pay_method, COUNT(*), SUM(paid)
FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR(ts), INTERVAL '30' SECOND))
GROUP BY window_start, window_end, pay_method;
