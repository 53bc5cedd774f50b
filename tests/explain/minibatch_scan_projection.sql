CREATE TABLE t (a INT, b BIGINT, c STRING, d INT, e DOUBLE, f STRING) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE s (c STRING, n BIGINT, PRIMARY KEY (c) NOT ENFORCED) WITH ('connector' = 'blackhole');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1s';
SET 'table.exec.mini-batch.size' = '100';
EXPLAIN INSERT INTO s SELECT c, COUNT(DISTINCT a) FROM t GROUP BY c;
