SELECT ordered_at AS "value" FROM "shop"."orders" LIMIT 0
