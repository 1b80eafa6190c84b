--
-- PostgreSQL database dump (pg_dump 16, schema hr)
--

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);

CREATE SCHEMA hr;

CREATE FUNCTION hr.touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- a body full of semicolons; CREATE TABLE inside is not a table
    NEW.updated_at := now();
    EXECUTE 'CREATE TABLE not_a_table (id int)';
    RETURN NEW;
END;
$$;

CREATE TYPE hr.employment_kind AS ENUM ('permanent', 'contract', 'intern');

CREATE TABLE hr.regions (
    region_id integer NOT NULL,
    region_name character varying(50) NOT NULL
);

CREATE TABLE hr.countries (
    country_id character(2) NOT NULL,
    country_name character varying(60),
    region_id integer
);

CREATE TABLE hr.locations (
    location_id integer NOT NULL PRIMARY KEY,
    street_address character varying(40),
    city character varying(30) NOT NULL,
    country_id character(2)
);

CREATE TABLE hr.departments (
    department_id SERIAL PRIMARY KEY,
    department_name varchar(30) NOT NULL,
    manager_id integer,
    location_id integer REFERENCES hr.locations (location_id)
);

CREATE TABLE hr.jobs (
    job_id character varying(10) NOT NULL,
    job_title character varying(35) NOT NULL,
    min_salary numeric(8, 2),
    max_salary numeric(8,2),
    CONSTRAINT jobs_pkey PRIMARY KEY (job_id),
    CONSTRAINT jobs_salary_check CHECK ((min_salary <= max_salary))
);

CREATE SEQUENCE hr.employees_employee_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE hr.employees (
    employee_id integer DEFAULT nextval('hr.employees_employee_id_seq'::regclass) NOT NULL,
    first_name character varying(20),
    last_name character varying(25) NOT NULL,
    email text NOT NULL,
    hire_date TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    job_id character varying(10) NOT NULL,
    salary numeric(8,2) CHECK (salary > (0)::numeric),
    kind hr.employment_kind DEFAULT 'permanent'::hr.employment_kind NOT NULL,
    manager_id integer,
    department_id integer,
    bonus_rate double precision,
    updated_at timestamp(3) without time zone
);

CREATE TABLE hr.job_history (
    employee_id integer NOT NULL,
    start_date date NOT NULL,
    end_date date NOT NULL,
    job_id character varying(10) NOT NULL,
    department_id integer,
    CONSTRAINT job_history_date_check CHECK ((end_date > start_date))
);

ALTER SEQUENCE hr.employees_employee_id_seq OWNED BY hr.employees.employee_id;
ALTER TABLE ONLY hr.employees ALTER COLUMN employee_id SET DEFAULT nextval('hr.employees_employee_id_seq'::regclass);

ALTER TABLE ONLY hr.regions
    ADD CONSTRAINT regions_pkey PRIMARY KEY (region_id);
ALTER TABLE ONLY hr.countries
    ADD CONSTRAINT countries_pkey PRIMARY KEY (country_id);
ALTER TABLE ONLY hr.employees
    ADD CONSTRAINT employees_pkey PRIMARY KEY (employee_id);
ALTER TABLE ONLY hr.employees
    ADD CONSTRAINT employees_email_key UNIQUE (email);
ALTER TABLE ONLY hr.job_history
    ADD CONSTRAINT job_history_pkey PRIMARY KEY (employee_id, start_date);

CREATE INDEX employees_department_idx ON hr.employees USING btree (department_id);
CREATE UNIQUE INDEX employees_lower_email_idx ON hr.employees USING btree (lower(email));

ALTER TABLE ONLY hr.countries
    ADD CONSTRAINT countries_region_id_fkey FOREIGN KEY (region_id) REFERENCES hr.regions(region_id);
ALTER TABLE ONLY hr.locations
    ADD CONSTRAINT locations_country_id_fkey FOREIGN KEY (country_id) REFERENCES hr.countries(country_id);
ALTER TABLE ONLY hr.departments
    ADD CONSTRAINT departments_manager_id_fkey FOREIGN KEY (manager_id) REFERENCES hr.employees(employee_id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE ONLY hr.employees
    ADD CONSTRAINT employees_job_id_fkey FOREIGN KEY (job_id) REFERENCES hr.jobs(job_id);
ALTER TABLE ONLY hr.employees
    ADD CONSTRAINT employees_manager_id_fkey FOREIGN KEY (manager_id) REFERENCES hr.employees(employee_id);
ALTER TABLE ONLY hr.employees
    ADD CONSTRAINT employees_department_id_fkey FOREIGN KEY (department_id) REFERENCES hr.departments(department_id) ON DELETE SET NULL;
ALTER TABLE ONLY hr.job_history
    ADD CONSTRAINT job_history_employee_id_fkey FOREIGN KEY (employee_id) REFERENCES hr.employees(employee_id) ON DELETE CASCADE,
    ADD CONSTRAINT job_history_job_id_fkey FOREIGN KEY (job_id) REFERENCES hr.jobs(job_id),
    ADD CONSTRAINT job_history_department_id_fkey FOREIGN KEY (department_id) REFERENCES hr.departments(department_id) NOT VALID;

CREATE TRIGGER employees_touch BEFORE UPDATE ON hr.employees
    FOR EACH ROW EXECUTE FUNCTION hr.touch_updated_at();

COMMENT ON SCHEMA hr IS 'Human resources';
COMMENT ON TABLE hr.employees IS 'People on the payroll; one row per person, ''current'' only.';
COMMENT ON COLUMN hr.employees.salary IS 'Monthly salary in EUR';
COMMENT ON COLUMN hr.job_history.end_date IS 'Last day in the job (inclusive)';

ALTER TABLE hr.employees OWNER TO hr_admin;
GRANT USAGE ON SCHEMA hr TO reporting;
GRANT SELECT ON ALL TABLES IN SCHEMA hr TO reporting;
