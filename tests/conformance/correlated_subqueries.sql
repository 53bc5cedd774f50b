-- Correlated IN and NOT IN subqueries: semi and anti joins on the IN column and the correlated conditions (NOT IN null-aware).
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
CREATE TABLE a (id BIGINT, product STRING) WITH ('connector' = 'print', 'print-identifier' = 'corr_in');
CREATE TABLE b (id BIGINT, product STRING) WITH ('connector' = 'print', 'print-identifier' = 'corr_not_in');
EXECUTE STATEMENT SET BEGIN
INSERT INTO a SELECT id, product FROM orders o
WHERE o.id IN (SELECT p.order_id FROM payments p WHERE p.paid > o.amount - 10 AND p.pay_method <> 'refund');
INSERT INTO b SELECT id, product FROM orders o
WHERE o.id NOT IN (SELECT p.order_id FROM payments p WHERE p.paid >= o.amount);
END;
