-- partitions: 1
CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'raw');
INSERT INTO t VALUES ('plain'), ('two
lines'), (''), ('ünï');
-- read
CREATE TABLE r (v STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'raw');
CREATE TABLE printed (v STRING, n INT) WITH ('connector' = 'print');
INSERT INTO printed SELECT v, CHAR_LENGTH(v) FROM r;
