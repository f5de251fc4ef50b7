-- One order has a negative amount and one an unknown status: the checks must find both.
select
    order_id,
    customer_id,
    status,
    cast(amount as double) as amount,
    cast(order_date as date) as order_date
from (values
    (10, 1, 'paid', 25.0, '2024-01-01'),
    (11, 2, 'paid', -3.0, '2024-01-01'),
    (12, 3, 'lost', 12.5, '2024-01-02'),
    (13, 1, 'open', 7.0, '2024-01-02'),
    (14, 2, 'paid', 40.0, '2024-01-02')
) as raw(order_id, customer_id, status, amount, order_date)
join {{ ref('customers') }} using (customer_id)
