-- partitions: 1
CREATE TABLE t (name STRING, cnt BIGINT, total INT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'debezium-json');
INSERT INTO t SELECT name, COUNT(*), SUM(v) FROM (VALUES ('a', 1), ('b', 2), ('a', 3), ('c', 4), ('b', 5), ('a', 6)) AS s(name, v) GROUP BY name;
-- read
CREATE TABLE r (name STRING, cnt BIGINT, total INT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json');
CREATE TABLE printed (name STRING, cnt BIGINT, total INT) WITH ('connector' = 'print');
INSERT INTO printed SELECT * FROM r;
