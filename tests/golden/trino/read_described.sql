SELECT * FROM (SELECT * FROM "shop"."orders" WHERE (ordered_at) >= CAST('2024-03-31 00:00:00' AS TIMESTAMP(6)) AND (ordered_at) < CAST('2024-04-01 00:00:00' AS TIMESTAMP(6))) AS __dy_rows LIMIT 0
