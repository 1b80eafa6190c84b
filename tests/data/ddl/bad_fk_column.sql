-- Broken on purpose: the ALTER TABLE on line 23 references tickets(ticket_no),
-- but the key column of tickets is ticket_id.
CREATE TABLE agents (
    agent_id  SERIAL PRIMARY KEY,
    full_name VARCHAR(80) NOT NULL
);

CREATE TABLE tickets (
    ticket_id   SERIAL PRIMARY KEY,
    subject     VARCHAR(200) NOT NULL,
    assignee_id INTEGER REFERENCES agents (agent_id),
    opened_at   TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

CREATE TABLE ticket_events (
    event_id  SERIAL PRIMARY KEY,
    ticket_id INTEGER NOT NULL,
    kind      VARCHAR(20) NOT NULL
);

ALTER TABLE ONLY ticket_events
    ADD CONSTRAINT ticket_events_ticket_fkey FOREIGN KEY (ticket_id)
    REFERENCES tickets (ticket_no) ON DELETE CASCADE;
