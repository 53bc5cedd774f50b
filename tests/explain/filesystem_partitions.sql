-- Partition push-down: conjuncts over the partition columns alone choose the partitions read
-- when the query is planned (listed from tests/explain/partitions) and leave the filter; the
-- other conjuncts stay above the scan. No partition left is an empty VALUES; a disjunction
-- with another column chooses none.
CREATE TABLE t (id INT, name STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = 'partitions', 'format' = 'csv');
CREATE TABLE s (id INT) WITH ('connector' = 'blackhole');
EXPLAIN SELECT id, name FROM t WHERE dt = '2024-01-02';
EXPLAIN SELECT id, dt FROM t WHERE dt > '2024-01-02' AND id > 1;
EXPLAIN INSERT INTO s SELECT id FROM t WHERE dt = '2030-01-01';
EXPLAIN SELECT id FROM t WHERE dt = '2024-01-01' OR id = 4;
