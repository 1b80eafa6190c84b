-- Broken on purpose: the FOREIGN KEY column list of "orders" lacks its ')' (line 12).
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL,
    total NUMERIC(10, 2) NOT NULL,
    placed_at TEXT,
    FOREIGN KEY (customer_id REFERENCES customers (id)
);

CREATE TABLE order_lines (
    order_id INTEGER REFERENCES orders (id),
    line_no INTEGER,
    PRIMARY KEY (order_id, line_no)
);
