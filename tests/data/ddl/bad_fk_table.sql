-- Broken on purpose: "invoices" references a table "customer" that does not exist (line 14).
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    name        TEXT NOT NULL
);

CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    title      TEXT NOT NULL
);

CREATE TABLE invoices (
    invoice_id  INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customer (customer_id),
    issued_on   DATE NOT NULL
);

CREATE TABLE invoice_lines (
    invoice_id INTEGER NOT NULL REFERENCES invoices,
    product_id INTEGER NOT NULL REFERENCES products,
    amount     NUMERIC(10, 2) NOT NULL,
    PRIMARY KEY (invoice_id, product_id)
);
