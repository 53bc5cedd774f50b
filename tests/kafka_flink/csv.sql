-- partitions: 1
CREATE TABLE t (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN)
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
INSERT INTO t VALUES
  (1, 'apple', 1.50, TIMESTAMP '2024-01-01 10:00:00.123', true),
  (2, 'has,comma "q"', 2.25, TIMESTAMP '2024-01-01 10:00:01', false),
  (3, CAST(NULL AS STRING), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS BOOLEAN)),
  (4, '', -0.01, TIMESTAMP '1970-01-01 00:00:00', true);
-- read
CREATE TABLE r (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN)
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE printed (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN) WITH ('connector' = 'print');
INSERT INTO printed SELECT * FROM r;
