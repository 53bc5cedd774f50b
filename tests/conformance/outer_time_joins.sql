-- FULL interval join with strict bounds, FULL window join (table.optimizer.window-join-enabled) and NOT IN with a subquery (watermarks lag enough that no row is late).
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
CREATE TABLE j (id BIGINT, pay_method STRING, order_ts TIMESTAMP(3), pay_ts TIMESTAMP(3))
WITH ('connector' = 'print', 'print-identifier' = 'lij');
CREATE TABLE f (id BIGINT, pay_method STRING, ws TIMESTAMP(3))
WITH ('connector' = 'print', 'print-identifier' = 'fwj');
CREATE TABLE n (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'notin');
SET 'table.optimizer.window-join-enabled' = 'true';
EXECUTE STATEMENT SET BEGIN
INSERT INTO j SELECT o.id, p.pay_method, CAST(o.ts AS TIMESTAMP(3)), CAST(p.ts AS TIMESTAMP(3))
FROM orders o FULL JOIN payments p
ON o.id = p.order_id AND p.ts > o.ts - INTERVAL '1' SECOND AND p.ts < o.ts + INTERVAL '2' SECOND;
INSERT INTO f SELECT o.id, p.pay_method, COALESCE(o.window_start, p.window_start)
FROM (SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))) o
FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' SECOND))) p
ON o.id = p.order_id AND o.window_start = p.window_start AND o.window_end = p.window_end;
INSERT INTO n SELECT id FROM orders WHERE id NOT IN (SELECT order_id FROM payments WHERE pay_method = 'card');
END;
