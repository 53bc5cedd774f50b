CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE s1 (id BIGINT, product STRING) WITH ('connector' = 'blackhole');
CREATE TABLE s2 (id BIGINT, qty INT) WITH ('connector' = 'blackhole');
EXPLAIN STATEMENT SET BEGIN
INSERT INTO s1 SELECT id, product FROM orders WHERE qty > 1 AND user_id = 7;
INSERT INTO s2 SELECT id, qty FROM orders WHERE qty < 5;
END;
