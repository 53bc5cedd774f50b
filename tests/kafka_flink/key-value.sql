-- partitions: 2
CREATE TABLE t (k_id INT, k_region STRING, name STRING, amount DECIMAL(10, 2))
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'csv', 'key.fields' = 'k_id;k_region', 'key.fields-prefix' = 'k_',
  'value.format' = 'avro', 'value.fields-include' = 'EXCEPT_KEY');
INSERT INTO t VALUES (1, 'eu', 'apple', 1.50), (2, 'us', 'pear', 2.00), (3, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS DECIMAL(10, 2)));
-- read
CREATE TABLE r (k_id INT, k_region STRING, name STRING, amount DECIMAL(10, 2))
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'csv', 'key.fields' = 'k_id;k_region', 'key.fields-prefix' = 'k_',
  'value.format' = 'avro', 'value.fields-include' = 'EXCEPT_KEY', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE printed (k_id INT, k_region STRING, name STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'print');
INSERT INTO printed SELECT * FROM r;
