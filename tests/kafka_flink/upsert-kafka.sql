-- partitions: 3
CREATE TABLE t (name STRING, cnt BIGINT, total INT, PRIMARY KEY (name) NOT ENFORCED)
WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY');
INSERT INTO t SELECT name, COUNT(*), SUM(v) FROM (VALUES ('a', 1), ('b', 2), ('a', 3), ('c', 4), ('b', 5), ('a', 6)) AS s(name, v) WHERE v <> 4 OR name <> 'c' GROUP BY name;
-- read
CREATE TABLE r (name STRING, cnt BIGINT, total INT, PRIMARY KEY (name) NOT ENFORCED)
WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE printed (name STRING, cnt BIGINT, total INT) WITH ('connector' = 'print');
INSERT INTO printed SELECT * FROM r;
