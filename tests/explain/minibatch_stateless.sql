CREATE TABLE t (a INT, b BIGINT, c STRING, d INT, e DOUBLE, f STRING) WITH ('connector' = 'datagen');
CREATE TABLE s2 (a INT, c STRING) WITH ('connector' = 'blackhole');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1s';
SET 'table.exec.mini-batch.size' = '100';
EXPLAIN INSERT INTO s2 SELECT a, c FROM t WHERE a > 1;
