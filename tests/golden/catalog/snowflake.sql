SELECT
  column_name,
  data_type,
  collation_name
FROM "WAREHOUSE".INFORMATION_SCHEMA.COLUMNS
WHERE
  table_name = 'ORDERS' AND table_schema = 'SALES'
ORDER BY
  ordinal_position
