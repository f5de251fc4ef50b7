"""What `defective_orders()` fails, rule by rule and row by row, as its docstring documents."""

from __future__ import annotations

#: Failing rows per rule of `defective_orders()`.
DEFECTIVE_COUNTS = {
    "primary_key": 2,
    "line_item_id|unique": 2,
    "customer_email|nullability": 1,
    "order_id|regex": 1,
    "customer_email|check__is_lowercase": 1,
    "paid_orders_have_amount": 2,
    "amount|min": 1,
    "amount|max": 1,
    "note|max_length": 1,
    "shipped_after_ordered": 2,
}
#: The rules of `OrdersSchema` that only warn.
WARN_RULES = {"amount|max", "note|max_length", "shipped_after_ordered"}
#: Failing rows per `"error"` rule of `defective_orders()`.
ERROR_COUNTS = {rule: n for rule, n in DEFECTIVE_COUNTS.items() if rule not in WARN_RULES}

#: `(order_id, line)` of the rows of `defective_orders()` failing no rule, and failing only
#: warn rules.
VALID = [("ORD-20001", 1), ("ORD-20001", 2), ("ORD-20002", 1)]
WARN_ONLY = [("ORD-20008", 1), ("ORD-20009", 1), ("ORD-20010", 1)]
