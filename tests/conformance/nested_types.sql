-- ROW, ARRAY, MAP and MULTISET columns read from JSON: printed whole, taken apart (field access,
-- subscripts, CARDINALITY, ELEMENT), built (ROW, ARRAY, MAP), cast (to nested types and to STRING),
-- grouped on and unnested.
CREATE TABLE devices (
  id INT,
  meta ROW<device STRING, os STRING, version INT>,
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>,
  parts ARRAY<ROW<name STRING, price DECIMAL(10, 2)>>,
  bag MULTISET<STRING>
) WITH ('connector' = 'filesystem', 'path' = 'data/devices.json', 'format' = 'json');

CREATE TABLE whole (id INT, meta ROW<device STRING, os STRING, version INT>, tags ARRAY<STRING>, attrs MAP<STRING, INT>, parts ARRAY<ROW<name STRING, price DECIMAL(10, 2)>>, bag MULTISET<STRING>) WITH ('connector' = 'print', 'print-identifier' = 'whole');
CREATE TABLE pieces (id INT, device STRING, version INT, first_tag STRING, third_tag STRING, k1 INT, n_tags INT, n_attrs INT, first_part STRING, first_price DECIMAL(10, 2)) WITH ('connector' = 'print', 'print-identifier' = 'pieces');
CREATE TABLE built (id INT, arr ARRAY<INT>, r ROW<a INT, b STRING>, m MAP<STRING, INT>, only_tag STRING, wide ARRAY<BIGINT>) WITH ('connector' = 'print', 'print-identifier' = 'built');
CREATE TABLE by_device (device STRING, n BIGINT, tags BIGINT, PRIMARY KEY (device) NOT ENFORCED) WITH ('connector' = 'print', 'print-identifier' = 'by_device');
CREATE TABLE per_tag (id INT, tag STRING, pos INT) WITH ('connector' = 'print', 'print-identifier' = 'per_tag');
CREATE TABLE per_attr (id INT, k STRING, v INT) WITH ('connector' = 'print', 'print-identifier' = 'per_attr');
CREATE TABLE per_part (id INT, name STRING, price DECIMAL(10, 2)) WITH ('connector' = 'print', 'print-identifier' = 'per_part');
CREATE TABLE casted (id INT, meta ROW<d STRING, o STRING, v BIGINT>, attrs MAP<STRING, BIGINT>, tags ARRAY<VARCHAR(1)>, meta_text STRING, attrs_text STRING, parts_text STRING) WITH ('connector' = 'print', 'print-identifier' = 'casted');
CREATE TABLE part_totals (device STRING, total DECIMAL(38, 2), PRIMARY KEY (device) NOT ENFORCED) WITH ('connector' = 'print', 'print-identifier' = 'part_totals');

EXECUTE STATEMENT SET
BEGIN
INSERT INTO whole SELECT * FROM devices;
INSERT INTO pieces
SELECT id, meta.device, devices.meta.version, tags[1], tags[3], attrs['k1'], CARDINALITY(tags), CARDINALITY(attrs), parts[1].name, parts[1].price
FROM devices;
INSERT INTO built
SELECT id, ARRAY[id, id * 2], ROW(id, meta.os), MAP['id', id, 'v', meta.version], CASE WHEN CARDINALITY(tags) = 1 THEN ELEMENT(tags) END, CAST(ARRAY[id] AS ARRAY<BIGINT>)
FROM devices;
INSERT INTO by_device SELECT meta.device, COUNT(*), SUM(CARDINALITY(tags)) FROM devices WHERE meta IS NOT NULL GROUP BY meta.device;
INSERT INTO per_tag SELECT id, tag, pos FROM devices CROSS JOIN UNNEST(tags) WITH ORDINALITY AS t(tag, pos);
INSERT INTO per_attr SELECT id, k, v FROM devices LEFT JOIN UNNEST(attrs) AS t(k, v) ON TRUE;
INSERT INTO per_part SELECT id, name, price FROM devices CROSS JOIN UNNEST(parts) AS p(name, price) WHERE price IS NULL OR price > 1;
INSERT INTO casted
SELECT id, CAST(meta AS ROW<d STRING, o STRING, v BIGINT>), CAST(attrs AS MAP<STRING, BIGINT>), CAST(tags AS ARRAY<VARCHAR(1)>), CAST(meta AS STRING), CAST(attrs AS STRING), CAST(parts AS STRING)
FROM devices;
INSERT INTO part_totals SELECT meta.device, SUM(p.price) FROM devices CROSS JOIN UNNEST(parts) AS p(name, price) GROUP BY meta.device;
END;
