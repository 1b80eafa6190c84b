-- A small SQLite schema with a composite primary key, a composite foreign key and a
-- REFERENCES without columns; the C++ and Python SQLite loader tests create it.
CREATE TABLE "Student" (student_id INTEGER PRIMARY KEY, "full name" TEXT NOT NULL);
CREATE TABLE course (dept TEXT, num INTEGER, title VARCHAR(80), PRIMARY KEY (dept, num));
CREATE TABLE enrolment (
  student_id INTEGER REFERENCES Student,
  dept TEXT, num INTEGER, grade REAL,
  FOREIGN KEY (dept, num) REFERENCES course (dept, num),
  PRIMARY KEY (student_id, dept, num));
CREATE INDEX enrolment_grade ON enrolment(grade);
CREATE VIEW honours AS SELECT * FROM enrolment WHERE grade > 3.5;
