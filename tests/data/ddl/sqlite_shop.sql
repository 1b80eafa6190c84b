-- Web shop schema, SQLite dialect (sqlite3 .schema output, lightly edited).
PRAGMA foreign_keys = ON;
BEGIN TRANSACTION;

CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    email       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    full_name   TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (datetime('now'))
);

/* Products point at categories, which are declared further down. */
CREATE TABLE products (
    product_id  INTEGER PRIMARY KEY AUTOINCREMENT,
    sku         VARCHAR(32) NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    price       NUMERIC(10, 2) NOT NULL CHECK (price >= 0),
    category_id INTEGER REFERENCES categories ON DELETE SET NULL,
    "Unit Weight" REAL
);

CREATE TABLE IF NOT EXISTS "categories" (
    "category_id" INTEGER PRIMARY KEY,
    "name"        TEXT NOT NULL,
    "parent_id"   INTEGER REFERENCES "categories" ("category_id")
);

CREATE TABLE orders (
    order_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER NOT NULL REFERENCES customers(customer_id) ON DELETE CASCADE,
    status      TEXT NOT NULL DEFAULT 'new'
                CHECK (status IN ('new', 'paid', 'shipped', 'cancelled')),
    note        TEXT DEFAULT 'customer''s note; (none)',
    ordered_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE [order_items] (
    [order_id]   INTEGER NOT NULL REFERENCES orders (order_id),
    [product_id] INTEGER NOT NULL REFERENCES products (product_id),
    quantity     INTEGER NOT NULL DEFAULT 1 CHECK (quantity > 0),
    unit_price   NUMERIC(10,2) NOT NULL,
    PRIMARY KEY (order_id, product_id)
) WITHOUT ROWID;

CREATE TABLE `reviews` (
    review_id   INTEGER PRIMARY KEY,
    product_id  INTEGER NOT NULL,
    customer_id INTEGER,
    rating      INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body        TEXT,
    FOREIGN KEY (product_id) REFERENCES products(product_id) ON DELETE CASCADE,
    FOREIGN KEY (customer_id) REFERENCES customers
) STRICT;

CREATE INDEX idx_orders_customer ON orders (customer_id);
CREATE UNIQUE INDEX idx_products_sku ON products (sku);

CREATE VIEW order_totals AS
    SELECT o.order_id, SUM(i.quantity * i.unit_price) AS total
    FROM orders o JOIN order_items i ON i.order_id = o.order_id
    GROUP BY o.order_id;

CREATE TRIGGER orders_paid AFTER UPDATE OF status ON orders
WHEN NEW.status = 'paid'
BEGIN
    UPDATE products SET name = name
    WHERE product_id IN (SELECT product_id FROM order_items WHERE order_id = NEW.order_id);
END;

INSERT INTO categories VALUES (1, 'Books; paper (and e-books)', NULL);
INSERT INTO "categories" ("category_id", "name", "parent_id") VALUES (2, 'Crime', 1);
COMMIT;
