-- Literals as Flink prints them: in the execution plan strings in plain quotes, elsewhere as
-- _UTF-16LE'…' with their quotes doubled; times as Calcite writes them (seconds always, the
-- fraction without trailing zeros); a CASE's string literals typed as the CASE; in the physical
-- plan a string literal compared by = or <> typed as the other side (Flink's optimizer does).
CREATE TABLE g (id INT, name STRING, d DECIMAL(10, 2), ts TIMESTAMP(3), dt DATE, b BOOLEAN, t TIME(0)) WITH ('connector' = 'datagen');
EXPLAIN SELECT id, name || 'x' AS n2, CASE WHEN id > 0 THEN 'a' ELSE 'bc' END AS c FROM g WHERE name = 'it''s' AND d > 1.5 AND ts > TIMESTAMP '2024-01-01 00:00:00' AND dt <> DATE '2024-01-02' AND name LIKE 'a%' AND b IS NOT TRUE;
EXPLAIN SELECT id FROM g WHERE ts > TIMESTAMP '2024-01-01 00:00:00.1' AND t > TIME '10:00:00' AND name LIKE 'it''s%';
CREATE TABLE h (id INT, name STRING, c CHAR(3), v VARCHAR(5)) WITH ('connector' = 'datagen');
EXPLAIN SELECT id, CASE WHEN id > 1 THEN 'a' ELSE name END AS k, COALESCE(name, 'x') AS n FROM h WHERE name <> 'a';
EXPLAIN SELECT id FROM h WHERE v = 'abc' AND name > 'b';
