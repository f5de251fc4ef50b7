SELECT
  column_name,
  data_type,
  collation_name
FROM `warehouse`.`sales`.`INFORMATION_SCHEMA.COLUMNS`
WHERE
  table_name = 'orders'
ORDER BY
  ordinal_position
