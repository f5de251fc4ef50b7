select * from (values
    (1, 'Ada'),
    (2, 'Grace'),
    (3, 'Edsger')
) as customers(customer_id, name)
