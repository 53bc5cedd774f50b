-- An interval join between two processing-time attributes (ProcTimeIntervalJoin).
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3), proc AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
EXPLAIN SELECT o.id, p.pay_method FROM orders o JOIN payments p ON o.id = p.order_id AND p.proc BETWEEN o.proc - INTERVAL '1' HOUR AND o.proc + INTERVAL '1' HOUR;
