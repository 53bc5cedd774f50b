-- partitions: 2
CREATE TABLE t (id INT, s STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', hs MAP<STRING, BYTES> METADATA FROM 'headers')
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', 'sink.partitioner' = 'fixed');
INSERT INTO t VALUES
  (1, 'a', TO_TIMESTAMP_LTZ(1700000000000, 3), MAP['h1', CAST('hi' AS BYTES)]),
  (2, 'b', TO_TIMESTAMP_LTZ(1700000001500, 3), MAP['h1', CAST('x' AS BYTES), 'h2', CAST('' AS BYTES)]);
-- read
CREATE TABLE r (id INT, s STRING, `partition` INT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  tt STRING METADATA FROM 'timestamp-type' VIRTUAL, tp STRING METADATA FROM 'topic' VIRTUAL)
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE printed (id INT, s STRING, p INT, o BIGINT, ts STRING, tt STRING, same_topic BOOLEAN) WITH ('connector' = 'print');
INSERT INTO printed SELECT id, s, `partition`, `offset`, CAST(CAST(ts AS TIMESTAMP(3)) AS STRING), tt, tp LIKE '%metadata%' FROM r;
